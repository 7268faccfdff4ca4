// Package testsupport is the one place for what tests need and the product
// never runs: an in-process OAuth provider (oauthtest), a real Ory Hydra
// started for a test (hydratest), and a log buffer safe for concurrent use
// (syncbuf), the real MCP servers from npm (mcpservertest), a real PostgreSQL
// cluster on loopback (pgtest), and busguard, which finds what a test's
// child left running (an autolaunched session bus). Only _test.go files import these packages
// (backend/importrules_test.go holds the rule), and internal/ keeps them out
// of reach of any other module.
package testsupport
