# Yett: two commands do everything on Debian 12.
#
#   make run    install what is missing, build the frontend and the app, start Yett
#   make test   install what is missing and run every layer of tests
#
# Both are idempotent and quick on a second run.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

export GOFLAGS := -tags=webkit2_41
DESKTOP_TAGS := desktop,production,webkit2_41
BIN := build/bin
ARTIFACTS ?= $(CURDIR)/artifacts
FUZZTIME ?= 10s

.PHONY: help run test build deps deps-test frontend desktop desktop-dev cli \
	test-go test-fuzz test-cross test-frontend test-window test-e2e bench

help:
	@echo "make run    build and start the Yett desktop app (installs what it needs)"
	@echo "make test   run every test (installs what it needs)"
	@echo "make bench  run the benchmarks"

run: deps build
	./$(BIN)/yett-desktop

build: frontend desktop cli

deps:
	@build/scripts/deps.sh run

deps-test:
	@build/scripts/deps.sh test

frontend:
	cd frontend && npm run build

desktop: frontend
	go build -tags $(DESKTOP_TAGS) -o $(BIN)/yett-desktop .

# A dev build serves the UI with live bindings on a local port for the
# browser tests. It refuses to open anything but a throwaway vault.
desktop-dev: frontend
	go build -tags dev,webkit2_41 -o $(BIN)/yett-desktop-dev .

cli:
	CGO_ENABLED=0 go build -o $(BIN)/yett ./cmd/yett

test: deps-test frontend
	@mkdir -p $(ARTIFACTS)
	$(MAKE) --no-print-directory test-frontend
	$(MAKE) --no-print-directory test-go
	$(MAKE) --no-print-directory test-fuzz
	$(MAKE) --no-print-directory test-cross
	$(MAKE) --no-print-directory test-window
	$(MAKE) --no-print-directory test-e2e
	@echo "yett: every test layer passed"

# Go tests never touch the person's own session bus or keyring: the keyring
# library connects to the session bus when it is linked (and would autolaunch
# one that outlives the test without this); tests that need a bus start their
# own.
test-go: export DBUS_SESSION_BUS_ADDRESS = disabled:
test-go:
	test -z "$$(gofmt -l app backend cmd internal main.go)" || { gofmt -l app backend cmd internal main.go; exit 1; }
	go vet ./...
	go test -race -count=1 ./...
	# the development build's guard exists only in that build
	go test -race -count=1 -tags dev,webkit2_41 -run 'TestDevBuildGuard' ./app/
	# benchmarks run once each so they stay runnable; figures come from `make bench`
	go test -run='^$$' -bench=. -benchtime=1x ./... > $(ARTIFACTS)/bench-smoke.txt

test-fuzz: export DBUS_SESSION_BUS_ADDRESS = disabled:
test-fuzz:
	@build/scripts/fuzz.sh $(FUZZTIME)

test-cross:
	CGO_ENABLED=0 GOOS=windows go build -tags desktop,production -ldflags -H=windowsgui -o $(BIN)/yett-desktop.exe .
	CGO_ENABLED=0 GOOS=windows go build -o $(BIN)/yett.exe ./cmd/yett
	CGO_ENABLED=0 GOOS=windows go vet ./backend/... ./cmd/...
	CGO_ENABLED=0 GOOS=darwin go vet ./backend/... ./cmd/...

test-frontend:
	cd frontend && npm run check && npm test

test-window: desktop
	build/scripts/window-test.sh $(BIN)/yett-desktop $(ARTIFACTS)

test-e2e: desktop-dev cli
	build/scripts/e2e.sh $(BIN)/yett-desktop-dev $(ARTIFACTS)

bench: export DBUS_SESSION_BUS_ADDRESS = disabled:
bench:
	go test -run='^$$' -bench=. -benchmem ./...
