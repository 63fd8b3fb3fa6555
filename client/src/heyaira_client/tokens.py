"""OAuth tokens and the registered client, per profile, in an owner-only file (0600 in a 0700
directory under the state directory). The SDK's OAuthClientProvider reads and writes them
through the TokenStorage protocol."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)

from heyaira_client.paths import private_dir, state_dir, write_private


class FileTokenStorage:
    def __init__(self, profile_name: str, resource: str, directory: Path | None = None) -> None:
        self.path = private_dir(directory or state_dir() / "tokens") / f"{profile_name}.json"
        self.resource = resource

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        # Tokens are bound to one resource: a profile pointed elsewhere starts over.
        return data if isinstance(data, dict) and data.get("resource") == self.resource else {}

    def _write(self, **changes: Any) -> None:
        data = {**self._read(), **changes, "resource": self.resource}
        write_private(self.path, json.dumps(data, indent=2))

    @property
    def expires_at(self) -> float | None:
        value = self._read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def has_tokens(self) -> bool:
        return "tokens" in self._read()

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self._read().get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + tokens.expires_in if tokens.expires_in else None
        self._write(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires_at)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        info = self._read().get("client_info")
        return OAuthClientInformationFull.model_validate(info) if info else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._write(client_info=client_info.model_dump(mode="json", exclude_none=True))

    def save_metadata(self, provider: OAuthClientProvider) -> None:
        """What discovery found (the token endpoint above all): a later process refreshes
        without discovering again, which only a 401 would start."""
        context = provider.context
        found = {
            "oauth_metadata": context.oauth_metadata,
            "protected_resource_metadata": context.protected_resource_metadata,
        }
        self._write(
            **{k: v.model_dump(mode="json", exclude_none=True) for k, v in found.items() if v}
        )

    def load_metadata(self, provider: OAuthClientProvider) -> None:
        data = self._read()
        if data.get("oauth_metadata"):
            provider.context.oauth_metadata = OAuthMetadata.model_validate(data["oauth_metadata"])
        if data.get("protected_resource_metadata"):
            provider.context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                data["protected_resource_metadata"]
            )

    def forget(self) -> None:
        self.path.unlink(missing_ok=True)


class StoredExpiryProvider(OAuthClientProvider):
    """The SDK's provider, told when stored tokens expire. It learns an expiry only from a token
    response in this process; a token loaded from disk would otherwise count as valid until the
    server answers 401, and a 401 starts a browser login where a refresh would have done."""

    def __init__(
        self,
        server_url: str,
        client_metadata: OAuthClientMetadata,
        storage: FileTokenStorage,
        redirect_handler: Callable[[str], Awaitable[None]],
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
    ) -> None:
        super().__init__(
            server_url=server_url,
            client_metadata=client_metadata,
            storage=storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        self._file_storage = storage

    async def _initialize(self) -> None:
        await super()._initialize()
        self._file_storage.load_metadata(self)
        expires_at = self._file_storage.expires_at
        if expires_at is not None:
            # A minute early, so that a token never expires between the check and the request.
            self.context.token_expiry_time = expires_at - 60
