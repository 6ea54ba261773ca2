"""Remote URLs: ``s3://bucket/prefix?endpoint=...&region=...`` (docs/REMOTE.md).

Credentials are never part of the URL or the field: they come the usual way
(AWS environment variables, the shared credentials/config files, a profile
named by ``?profile=`` or ``AWS_PROFILE``). The endpoint comes from
``?endpoint=``, else ``$AWS_ENDPOINT_URL_S3`` / ``$AWS_ENDPOINT_URL``, else AWS.
TLS is required except for loopback endpoints (``?insecure=1`` overrides).
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from chitta.errors import InvalidArgument

# S3 bucket names (the common rules: also what MinIO, Ceph and SeaweedFS accept).
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$")
_PREFIX_PART = re.compile(r"^[A-Za-z0-9._\-]+$")
_QUERY_KEYS = frozenset({"endpoint", "region", "profile", "insecure"})


@dataclass(frozen=True)
class RemoteURL:
    bucket: str
    prefix: str  # "" or "a/b/" (always ending in "/" when not empty)
    endpoint: str | None  # None: AWS's own endpoint for the region
    region: str | None
    profile: str | None

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_endpoint(endpoint: str, insecure: bool) -> str:
    parts = urlsplit(endpoint if "://" in endpoint else "https://" + endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArgument(
            f"remote endpoint {endpoint!r} is not an http(s) URL; give e.g. endpoint=https://s3.example.com"
        )
    if parts.scheme == "http" and not (insecure or _is_loopback(parts.hostname)):
        raise InvalidArgument(
            f"remote endpoint {endpoint!r} is plain http to a non-loopback host; use https, "
            "or add insecure=1 to the remote URL if the network is trusted"
        )
    return f"{parts.scheme}://{parts.netloc}"


def parse_url(url: str) -> RemoteURL:
    """Parse and check a remote URL; InvalidArgument saying what is wrong."""
    if not isinstance(url, str) or not url.strip():
        raise InvalidArgument("remote must be a URL like s3://bucket/prefix")
    parts = urlsplit(url.strip())
    if parts.scheme != "s3":
        raise InvalidArgument(f"remote {url!r}: only s3:// URLs are supported (s3://bucket/prefix)")
    bucket = parts.netloc
    if "@" in bucket or ":" in bucket:
        raise InvalidArgument(
            f"remote {url!r}: no credentials or ports in the URL; keys come from the AWS environment "
            "variables or profile files, the endpoint from ?endpoint="
        )
    if not _BUCKET.match(bucket) or ".." in bucket:
        raise InvalidArgument(
            f"remote {url!r}: {bucket!r} is not a valid bucket name (3-63 of a-z 0-9 . -)"
        )
    segments = [p for p in parts.path.split("/") if p]
    for seg in segments:
        if not _PREFIX_PART.match(seg) or seg in (".", ".."):
            raise InvalidArgument(
                f"remote {url!r}: prefix part {seg!r} may hold only A-Z a-z 0-9 . _ -"
            )
    prefix = "".join(seg + "/" for seg in segments)
    query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=False)
    unknown = set(query) - _QUERY_KEYS
    if unknown:
        raise InvalidArgument(
            f"remote {url!r}: unknown option(s) {sorted(unknown)}; known: {sorted(_QUERY_KEYS)}"
        )
    one = {k: vals[-1] for k, vals in query.items()}
    insecure = one.get("insecure", "0") in ("1", "true", "yes")
    endpoint = (
        one.get("endpoint")
        or os.environ.get("AWS_ENDPOINT_URL_S3")
        or os.environ.get("AWS_ENDPOINT_URL")
    )
    return RemoteURL(
        bucket=bucket,
        prefix=prefix,
        endpoint=_check_endpoint(endpoint, insecure) if endpoint else None,
        region=one.get("region") or None,
        profile=one.get("profile") or None,
    )
