# HeyAira: `make run` serves the app on SQLite; `make test` runs the whole suite, ruff and mypy;
# `make check` is the inner loop: lint, types and every test that starts no server, browser or
# subprocess (those carry the `live` marker, tests/live_marker.py).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Bytecode caches are written (__pycache__/, ignored by git) even where the environment says not
# to: pytest then keeps its rewritten test modules, which saves each worker about 2.5 s of
# collection, and every server or command a test starts skips compiling the project again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test check lint typecheck pytest pytest-quick smoke conformance-tools web-tools model-clients clean

$(VENV)/.runtime: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

# The quick start: SQLite in var/, DEBUG on, an owner account and a demo project on first run.
# var/quickstart.env keeps its random secrets (made once) so that sessions and API keys survive a
# restart and `python manage.py ...` afterwards runs with the same settings.
run: export DEBUG ?= true
run: export HEYAIRA_PUBLIC_URL ?= http://$(HOST):$(PORT)
run: $(VENV)/.runtime
	$(PY) -m heyaira.quickstart_env
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py quickstart
	$(PY) -m uvicorn heyaira.asgi:application --host $(HOST) --port $(PORT) --no-access-log \
		--no-proxy-headers  # client addresses: HEYAIRA_TRUSTED_PROXIES (heyaira/proxies.py)

# mypy runs beside the tests: it uses one core, and alone it would leave the other one idle.
# Each one's output is printed whole when it ends (--output-sync).
PARALLEL := $(MAKE) --no-print-directory --jobs=2 --output-sync=target

# The smoke test takes the slot mypy leaves (make starts it when typecheck ends): its own port
# and scratch SQLite file, so it runs beside pytest instead of after it.
test: lint
	$(PARALLEL) typecheck pytest smoke

check: lint
	$(PARALLEL) typecheck pytest-quick

lint: $(VENV)/.dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports

typecheck: $(VENV)/.dev
	DEBUG=true $(PY) -m mypy .

# worksteal: a worker that runs out takes the rest of the other's share, so a few long tests
# (Schemathesis, the 10,000-request flood) do not leave one core idle at the end. Both
# name their 25 slowest tests: where the next minute is.
pytest: $(VENV)/.dev
	$(PY) -m pytest -n 2 --dist worksteal -q --durations=25

pytest-quick: $(VENV)/.dev
	$(PY) -m pytest -n 2 --dist worksteal -q --durations=25 -m "not live"

# The continuity protocol end to end, against the server `make run` starts.
smoke: $(VENV)/.dev
	$(PY) scripts/smoke_make_run.py

# Node 22, the MCP conformance suite, the TypeScript SDK (1.x, 2.x client) and the Inspector CLI
# in .tools/ (npm registry, pinned by scripts/conformance/package-lock.json); without them
# tests/continuity/mcp/test_conformance.py and test_typescript_clients.py are skipped, except in CI.
conformance-tools:
	scripts/install_conformance.sh

# axe-core in .tools/web-tools (npm registry, pinned by scripts/web-tools/package-lock.json):
# tests/web/test_pages_browser.py runs it in every page; without it that check is skipped,
# except in CI.
web-tools:
	scripts/install_web_tools.sh

# The Gemini CLI and the Codex CLI, with Node 22, in .tools/model-clients (npm registry, pinned by
# scripts/model-clients/package-lock.json): tests/continuity/mcp/test_model_clients.py loads the
# server in each; without them it is skipped, except in CI.
model-clients:
	scripts/install_model_clients.sh

clean:
	rm -rf $(VENV) var .tools .pytest_cache .mypy_cache .ruff_cache
