# Yett: two commands do everything on Debian 12.
#
#   make run    install what is missing, build the frontend and the app, start Yett
#   make test   install what is missing and run every layer of tests
#
# make package builds the Debian package, the tarball and the Windows
# installer into build/bin/packages (README: Install).
#
# Both are idempotent and quick on a second run.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

export GOFLAGS := -tags=webkit2_41
DESKTOP_TAGS := desktop,production,webkit2_41
BIN := build/bin
ARTIFACTS ?= $(CURDIR)/artifacts
# Each fuzz target explores for FUZZTIME beyond its seed corpus (which
# every go test run replays): 63 targets, so 6 s each is about 6 minutes.
FUZZTIME ?= 6s
PACKAGES := $(BIN)/packages

# The version has one source, VERSION; both binaries and the package names
# carry it (yett --version, the About view).
VERSION := $(shell cat VERSION)
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
VERSION_LDFLAGS := -X github.com/yettdev/yett/backend/version.number=$(VERSION) \
	-X github.com/yettdev/yett/backend/version.commit=$(COMMIT)

.PHONY: help run test build deps deps-test frontend desktop desktop-dev cli \
	test-go test-fuzz test-cross test-windows test-frontend test-window test-e2e bench \
	package deps-package windows test-package

help:
	@echo "make run    build and start the Yett desktop app (installs what it needs)"
	@echo "make test   run every test (installs what it needs)"
	@echo "make bench  run the benchmarks"
	@echo "make package  build the Debian package, tarball and Windows installer"

run: deps build
	./$(BIN)/yett-desktop

build: frontend desktop cli

deps:
	@build/scripts/deps.sh run

deps-test:
	@build/scripts/deps.sh test

deps-package:
	@build/scripts/deps.sh package

frontend:
	cd frontend && npm run build

desktop: frontend
	go build -tags $(DESKTOP_TAGS) -ldflags "$(VERSION_LDFLAGS)" -o $(BIN)/yett-desktop .

# A dev build serves the UI with live bindings on a local port for the
# browser tests. It refuses to open anything but a throwaway vault.
desktop-dev: frontend
	go build -tags dev,webkit2_41 -ldflags "$(VERSION_LDFLAGS)" -o $(BIN)/yett-desktop-dev .

cli:
	CGO_ENABLED=0 go build -ldflags "$(VERSION_LDFLAGS)" -o $(BIN)/yett ./cmd/yett

# Each layer says how long it took (CI's whole run must stay well under 45
# minutes; the figures say where to look first).
TEST_LAYERS := test-frontend test-go test-fuzz test-cross test-windows test-window test-package test-e2e

test: deps-test frontend
	@mkdir -p $(ARTIFACTS)
	@for layer in $(TEST_LAYERS); do \
		start=$$(date +%s); \
		$(MAKE) --no-print-directory $$layer; \
		echo "yett: $$layer passed in $$(( $$(date +%s) - start )) s" | tee -a $(ARTIFACTS)/layer-times.txt; \
	done
	@echo "yett: every test layer passed"

# Go tests never touch the person's own session bus or keyring: the keyring
# library connects to the session bus when it is linked; tests that need a
# bus start their own.
test-go: export DBUS_SESSION_BUS_ADDRESS = disabled:
test-go:
	test -z "$$(gofmt -l app backend cmd internal main.go)" || { gofmt -l app backend cmd internal main.go; exit 1; }
	go vet ./...
	# Hydra (the OAuth provider several packages test against) is built
	# before the tests, not inside a package's 10-minute test budget.
	build/scripts/hydra.sh >/dev/null
	go test -race -count=1 ./...
	# the development build's guard exists only in that build
	go test -race -count=1 -tags dev,webkit2_41 -run 'TestDevBuildGuard' ./app/
	# benchmarks run once each so they stay runnable; figures come from
	# `make bench` (-short: the team's 500 simulated machines are 25 here)
	go test -short -run='^$$' -bench=. -benchtime=1x ./... > $(ARTIFACTS)/bench-smoke.txt

test-fuzz: export DBUS_SESSION_BUS_ADDRESS = disabled:
test-fuzz:
	@build/scripts/fuzz.sh $(FUZZTIME)

# The Windows programs the installer ships (cross-built: no cgo needed).
# They embed frontend/dist: `make test` and `make package` build it first.
windows:
	CGO_ENABLED=0 GOOS=windows go build -tags desktop,production -ldflags "-H=windowsgui $(VERSION_LDFLAGS)" -o $(BIN)/yett-desktop.exe .
	CGO_ENABLED=0 GOOS=windows go build -ldflags "$(VERSION_LDFLAGS)" -o $(BIN)/yett.exe ./cmd/yett

# The Windows code's own tests, as Windows test binaries under Wine.
test-windows:
	build/scripts/wine.sh

test-cross: windows
	CGO_ENABLED=0 GOOS=windows go vet ./backend/... ./cmd/...
	CGO_ENABLED=0 GOOS=darwin go vet ./backend/... ./cmd/...

test-frontend:
	cd frontend && npm run check && npm test

test-window: desktop cli
	build/scripts/window-test.sh $(BIN)/yett-desktop $(ARTIFACTS)

# From a clean checkout: installs what it needs, builds, packages.
package: deps-package frontend desktop cli windows
	build/scripts/package.sh $(BIN) $(PACKAGES)

# Installs the .deb on this machine (root or sudo), tries it, removes it.
test-package: package
	build/scripts/package-test.sh $(PACKAGES) $(ARTIFACTS)

test-e2e: desktop-dev cli
	build/scripts/e2e.sh $(BIN)/yett-desktop-dev $(ARTIFACTS)

bench: export DBUS_SESSION_BUS_ADDRESS = disabled:
bench:
	go test -run='^$$' -bench=. -benchmem ./...
