"""The object store client: a thin wrapper around boto3's S3 client.

Every call maps the client's errors to chitta's (``RemoteUnavailable`` when the
store cannot be reached, ``RemoteError`` with what to do next otherwise).
Conditional writes use ``If-None-Match: *`` (create only) and ``If-Match``
(compare-and-swap on the ETag), which S3, MinIO, R2 and SeaweedFS honour.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from chitta.errors import RemoteError, RemoteUnavailable
from chitta.remote.url import RemoteURL

_MISSING = frozenset({"NoSuchKey", "404", "NotFound"})
_PRECONDITION = frozenset({"PreconditionFailed", "412", "ConditionalRequestConflict", "409"})
_CREDENTIALS = frozenset(
    {
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "AccessDenied",
        "403",
        "InvalidToken",
        "ExpiredToken",
    }
)


@dataclass(frozen=True)
class Listing:
    keys: list[tuple[str, int]]  # (key relative to the field prefix, size), in key order
    prefixes: list[str]  # common prefixes (with a delimiter), relative


class ObjectStore:
    """One bucket prefix. Keys given and returned are relative to the prefix."""

    def __init__(self, url: RemoteURL, *, timeout: float = 10.0) -> None:
        try:
            import boto3  # type: ignore[import-untyped,import-not-found,unused-ignore]
            from botocore.config import Config  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError as exc:  # the remote extra
            raise RemoteError("remote fields need boto3: pip install 'chitta[remote]'") from exc
        self.url = url
        session = (
            boto3.session.Session(profile_name=url.profile)
            if url.profile
            else boto3.session.Session()
        )
        config = Config(
            connect_timeout=min(timeout, 3.0),
            read_timeout=timeout,
            retries={"max_attempts": 2, "mode": "standard"},
            max_pool_connections=32,
            s3={"addressing_style": "path"} if url.endpoint else {},
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        try:
            self._s3: Any = session.client(
                "s3",
                endpoint_url=url.endpoint,
                region_name=url.region or "us-east-1",
                config=config,
            )
        except Exception as exc:  # profile not found, bad config file
            raise RemoteError(
                f"cannot set up the S3 client for {url}: {exc}; check the AWS profile/config"
            ) from exc
        self._errors = _import_errors()

    # ---- error mapping ----------------------------------------------------------------
    def _fail(self, exc: Exception, what: str) -> RemoteError:
        unreachable, client_error, no_creds = self._errors
        where = f"{self.url} ({self.url.endpoint or 'AWS'})"
        if isinstance(exc, no_creds):
            return RemoteError(
                f"{what}: no credentials for {where}; set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile"
            )
        if isinstance(exc, unreachable):
            return RemoteUnavailable(
                f"{what}: the object store {where} cannot be reached ({exc}); "
                "check the endpoint and network, local data is unchanged"
            )
        if isinstance(exc, client_error):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code == "NoSuchBucket":
                return RemoteError(
                    f"{what}: bucket {self.url.bucket!r} does not exist at {where}; create it first"
                )
            if code in _CREDENTIALS:
                return RemoteError(
                    f"{what}: the store refused the credentials for {where} ({code}); "
                    "check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the profile"
                )
            status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
            if status >= 500:
                return RemoteUnavailable(
                    f"{what}: the object store {where} failed ({code}, HTTP {status}); "
                    "it is retried, local data is unchanged"
                )
            return RemoteError(f"{what}: the object store {where} answered {code} (HTTP {status})")
        return RemoteError(f"{what}: {type(exc).__name__}: {exc}")

    @staticmethod
    def _code(exc: Exception) -> str:
        response = getattr(exc, "response", None) or {}
        code = str(response.get("Error", {}).get("Code", ""))
        status = str(response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
        return code if code else status

    def _key(self, key: str) -> str:
        return self.url.prefix + key

    # ---- requests ---------------------------------------------------------------------
    def check_bucket(self) -> None:
        try:
            self._s3.head_bucket(Bucket=self.url.bucket)
        except Exception as exc:
            if self._code(exc) in ("404", "NoSuchBucket", "NotFound"):
                raise RemoteError(
                    f"bucket {self.url.bucket!r} does not exist at "
                    f"{self.url.endpoint or 'AWS'}; create it first"
                ) from exc
            raise self._fail(exc, "checking the bucket") from exc

    def get(self, key: str) -> tuple[bytes, str] | None:
        """The object's bytes and ETag, None when there is none."""
        try:
            r = self._s3.get_object(Bucket=self.url.bucket, Key=self._key(key))
            return bytes(r["Body"].read()), str(r.get("ETag", ""))
        except Exception as exc:
            if self._code(exc) in _MISSING:
                return None
            raise self._fail(exc, f"reading {key}") from exc

    def put_new(self, key: str, data: bytes) -> bool:
        """Create the object; False (nothing written) when it already exists."""
        try:
            self._s3.put_object(
                Bucket=self.url.bucket, Key=self._key(key), Body=data, IfNoneMatch="*"
            )
            return True
        except Exception as exc:
            if self._code(exc) in _PRECONDITION:
                return False
            raise self._fail(exc, f"writing {key}") from exc

    def put_swap(self, key: str, data: bytes, etag: str | None) -> bool:
        """Replace the object if its ETag is still ``etag`` (create it if ``etag`` is
        None and it is absent); False when someone else changed it first."""
        if etag is None:
            return self.put_new(key, data)
        try:
            self._s3.put_object(Bucket=self.url.bucket, Key=self._key(key), Body=data, IfMatch=etag)
            return True
        except Exception as exc:
            if self._code(exc) in _PRECONDITION or self._code(exc) in _MISSING:
                return False
            raise self._fail(exc, f"replacing {key}") from exc

    def delete(self, key: str) -> None:
        try:
            self._s3.delete_object(Bucket=self.url.bucket, Key=self._key(key))
        except Exception as exc:
            raise self._fail(exc, f"deleting {key}") from exc

    def list(
        self, prefix: str, *, start_after: str | None = None, delimiter: str | None = None
    ) -> Listing:
        """Every key under ``prefix`` (after ``start_after``), all pages."""
        keys: list[tuple[str, int]] = []
        prefixes: list[str] = []
        cut = len(self.url.prefix)
        for page in self.pages(prefix, start_after=start_after, delimiter=delimiter):
            for item in page.get("Contents", ()):
                keys.append((str(item["Key"])[cut:], int(item["Size"])))
            for item in page.get("CommonPrefixes", ()):
                prefixes.append(str(item["Prefix"])[cut:])
        return Listing(keys, prefixes)

    def pages(
        self, prefix: str, *, start_after: str | None, delimiter: str | None
    ) -> Iterator[dict[str, Any]]:
        args: dict[str, Any] = {"Bucket": self.url.bucket, "Prefix": self._key(prefix)}
        if start_after:
            args["StartAfter"] = self._key(start_after)
        if delimiter:
            args["Delimiter"] = delimiter
        while True:
            try:
                page = self._s3.list_objects_v2(**args)
            except Exception as exc:
                raise self._fail(exc, f"listing {prefix}") from exc
            yield page
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return
            args["ContinuationToken"] = token
            args.pop("StartAfter", None)


def _import_errors() -> tuple[tuple[type[Exception], ...], type[Any], type[Exception]]:
    from botocore import exceptions as e  # type: ignore[import-untyped,import-not-found,unused-ignore]

    unreachable = (
        e.EndpointConnectionError,
        e.ConnectTimeoutError,
        e.ReadTimeoutError,
        e.ConnectionClosedError,
        e.ConnectionError,
    )
    return unreachable, e.ClientError, e.NoCredentialsError
