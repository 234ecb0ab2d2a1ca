# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
NODE_DIR := tests/node
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run keys-from-files test lint install node-deps migrate clean

$(BIN)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e ".[test]"
	touch $@

install: $(BIN)/.installed

# Node is optional on a newcomer's machine: tests that need it skip and say why.
node-deps:
	@if command -v npm >/dev/null 2>&1; then \
		cd $(NODE_DIR) && npm install --no-audit --no-fund --loglevel=error; \
	else \
		echo "npm not found: tests that need Node.js will be skipped"; \
	fi

migrate: install
	$(BIN)/python manage.py migrate --noinput

# make stays the web server's parent, and any process of its user may read make's environment in /proc: the keys come
# from var/ or from files (SECRET_KEY_FILE, ...), never from make's environment. Run as root, the console runs
# stdio servers as mcp-stdio, which is created here when missing.
KEYS := SECRET_KEY AUDIT_KEY AUDIT_SIGNING_KEY CREDENTIALS_KEY WEB_PUSH_VAPID_KEY
keys-from-files:
	@for key in $(KEYS); do \
		if [ -n "$$(printenv $$key)" ]; then \
			echo "make run: $$key is in make's environment, readable in /proc while the console runs;" \
				"put it in a file and set $${key}_FILE instead (README, Keys)"; exit 1; \
		fi; \
	done

# granian, as in the production recipe (Dockerfile; tests/fixtures/servers.py says why each option); one worker,
# which the in-memory channel layer requires.
WEB_SERVER := --interface asgi --workers 1 --loop uvloop --backpressure 10000 --workers-kill-timeout 5
WEB_SERVER += --no-access-log --log-level warning --log-config console/granian_logging.json
run: keys-from-files migrate
	@if [ "$$(id -u)" = 0 ] && ! id mcp-stdio >/dev/null 2>&1; then \
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin mcp-stdio; \
	fi
	HOST=$(HOST) PORT=$(PORT) $(BIN)/python manage.py seed_demo
	$(BIN)/python manage.py clear_metrics
	exec $(BIN)/granian $(WEB_SERVER) --host $(HOST) --port $(PORT) console.asgi:application

# The suite runs on the embedded defaults, then again, the tests of code that behaves differently on
# them (tests/services_pass.py), on PostgreSQL and Redis when DATABASE_URL and REDIS_URL name them (as
# .ci/run does); SERVICES_PASS_FOLLOWS tells the first pass so. WORKERS processes share each
# pass (0: the test process alone); on the services pass each takes the next Redis database after
# REDIS_URL's (tests/conftest.py). One worker more than two cores: much of a test's time is spent waiting
# on the browser, Node and the servers it starts, and the third worker runs while others wait. It prints
# the slowest tests. When PYTEST_ARGS picks no test the services pass runs, that pass collects none
# (pytest's exit 5) and is done; the first pass must run some.
WORKERS ?= 3
# pytest keeps each test module with its asserts rewritten in __pycache__: where the shell forbids that cache,
# every worker of both passes would rewrite every test module again.
unexport PYTHONDONTWRITEBYTECODE
SUITE := $(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup --durations=25
test: install node-deps
	env -u DATABASE_URL -u REDIS_URL SERVICES_PASS_FOLLOWS="$${DATABASE_URL:+1}" $(SUITE) $(PYTEST_ARGS)
	@if [ -n "$$DATABASE_URL" ]; then \
		echo "== again on $$DATABASE_URL and $${REDIS_URL:-no redis}"; \
		$(SUITE) $(PYTEST_ARGS) || [ $$? -eq 5 ]; \
	fi

# ruff, then the layers of docs/architecture.md (import-linter's contracts in pyproject.toml).
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) var staticfiles $(NODE_DIR)/node_modules
