# Collectives, Byte by Byte: build the book and run every test.
#
#   make book    build the book into _build/html (every notebook executed, warnings are errors)
#   make test    run all tests: unit, notebooks, book build, browser
#   make serve   serve _build/html on http://127.0.0.1:8000
#   make lab     open the chapters in JupyterLab
#   make repository URL=https://github.com/you/fork   point Binder and Colab at a fork
#
# Each target first makes sure .venv exists and holds requirements.txt; that
# step is skipped when the stamp for the current requirements.txt and
# pyproject.toml is already there.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := book

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The stamp's name carries a hash of the two files, so editing either (or
# checking out another version) reinstalls, and nothing else does.
REQ_HASH := $(shell cat requirements.txt pyproject.toml 2>/dev/null | sha256sum | cut -c1-16)
STAMP := $(VENV)/.installed-$(REQ_HASH)
CHROMIUM := /usr/bin/chromium
PORT ?= 8000

# Explorers pre-render their kernel-free twins only when this is set.
BOOK_ENV := COLLECTIVES_BOOK_BUILD=1
# Matplotlib's font cache lives in the venv it was built for: a user-wide cache
# written by another checkout's venv (since deleted) names fonts that are gone,
# and every chapter's stderr would say so.
export MPLCONFIGDIR := $(CURDIR)/$(VENV)/mplconfig

.PHONY: book test serve lab setup chromium clean repository

FONT_CACHE := $(VENV)/mplconfig/.built

setup: $(STAMP) $(FONT_CACHE)

$(STAMP):
	@test -x $(BIN)/python || { echo "Creating $(VENV) with $$($(PYTHON) --version)"; $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install --disable-pip-version-check --quiet -r requirements.txt
	@rm -f $(VENV)/.installed-*
	@touch $@
	@echo "$(VENV) is ready."

# Build matplotlib's font cache now, so no notebook prints "building the font cache" to stderr.
$(FONT_CACHE): $(STAMP)
	$(BIN)/python -c "import matplotlib.font_manager"
	@touch $@

book: setup
	$(BOOK_ENV) $(BIN)/jupyter-book build . --all --warningiserror --keep-going
	@echo
	@echo "The book is built. Open $(CURDIR)/_build/html/index.html"
	@echo "(or run 'make serve' and browse to http://127.0.0.1:$(PORT))."

# Debian's Chromium, for the browser tests (Playwright drives it; it never downloads a browser).
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
	  SUDO=""; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
	  echo "Installing Debian's chromium for the browser tests"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$SUDO apt-get install -y --no-install-recommends chromium \
	    || { $$SUDO apt-get update && $$SUDO apt-get install -y --no-install-recommends chromium; }; \
	fi

test: setup chromium
	$(BIN)/python -m pytest -ra --durations=10

serve:
	@test -f _build/html/index.html || { echo "No book built yet: run 'make book' first."; exit 1; }
	@echo "Serving the book on http://127.0.0.1:$(PORT) (Ctrl-C stops)"
	$(PYTHON) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

# Rooted at the repository, so that the chapters' links to ../book/glossary.md open.
lab: setup
	$(BIN)/jupyter lab --ip 127.0.0.1 $$( [ "$$(id -u)" = 0 ] && echo --allow-root ) \
	  --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/notebooks

# The repository is named once, in _config.yml; this writes URL there (when given)
# and into every chapter's Colab install cell.
repository: setup
	$(BIN)/python book/set_repository.py $(URL)

clean:
	rm -rf _build
