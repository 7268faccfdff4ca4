package action

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestIPv6FormsOfRefusedAddresses: an IPv6 address that stands for an
// IPv4 one (mapped, IPv4-compatible, 6to4, NAT64 well-known and
// local-use, SIIT, Teredo, ISATAP) is judged by the IPv4 address it
// embeds, so metadata and loopback cannot hide behind another spelling.
func TestIPv6FormsOfRefusedAddresses(t *testing.T) {
	ex := New(Config{Timeout: 2 * time.Second})
	for name, host := range map[string]string{
		"mapped metadata":                 "::ffff:169.254.169.254",
		"compatible metadata":             "::169.254.169.254",
		"compatible loopback":             "::127.0.0.1",
		"compatible private":              "::10.1.2.3",
		"6to4 metadata":                   "2002:a9fe:a9fe::1",
		"6to4 loopback":                   "2002:7f00:1::",
		"6to4 private":                    "2002:c0a8:0101::5",
		"nat64 loopback":                  "64:ff9b::127.0.0.1",
		"local nat64 /96 metadata":        "64:ff9b:1::a9fe:a9fe",
		"local nat64 /48 metadata":        "64:ff9b:1:a9fe:a9:fe00::",
		"local nat64 /64 loopback":        "64:ff9b:1:0:7f:0:1:0",
		"siit metadata":                   "::ffff:0:a9fe:a9fe",
		"teredo client metadata":          "2001:0:4136:e378:8000:63bf:5601:5601",
		"isatap private":                  "2001:db8::5efe:10.0.0.1",
		"isatap universal-local loopback": "2001:db8::200:5efe:127.0.0.1",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ex.Do(context.Background(), Request{URL: "http://[" + host + "]/"}, nil)
			if !errors.Is(err, ErrForbiddenTarget) {
				t.Fatalf("%s: got %v, want ErrForbiddenTarget", host, err)
			}
		})
	}
}
