"""`pip install ./client`, into a directory of its own instead of an environment.

The suite's virtualenv is shared and must not change, so the package goes to `--target`: pip
builds the wheel from client/pyproject.toml (setuptools, in pip's own isolated build environment)
and installs the package and its `bin/heyaira` script there. Its dependencies (mcp, httpx2,
anyio) are the suite's own, so `--no-deps`; the script's interpreter is this one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def pip_install_client(source: Path, target: Path) -> Path:
    # Built from a copy: setuptools leaves build/ and *.egg-info beside the sources it builds.
    copy = target.parent / f"{target.name}-source"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    done = subprocess.run(
        [*command, "--target", str(target), str(copy)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    if done.returncode != 0:
        raise RuntimeError(f"pip install ./client failed:\n{done.stdout}\n{done.stderr}")
    return target


def installed_environment(target: Path) -> dict[str, str]:
    """What a shell needs to run the installed `heyaira` as if pip had put it in the
    environment: its bin/ on PATH and its packages importable."""
    return {"PATH": f"{target / 'bin'}:{os.environ.get('PATH', '')}", "PYTHONPATH": str(target)}
