package action

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// echoHandler reflects the Authorization header: compressed with the
// codings named in the path (whatever was asked), as a 206 slice on
// /partial, plainly otherwise.
func echoHandler(w http.ResponseWriter, r *http.Request) {
	body := []byte("you sent: " + r.Header.Get("Authorization"))
	switch {
	case r.URL.Path == "/partial":
		w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-3/%d", len(body)))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(body[:4])
	case strings.HasPrefix(r.URL.Path, "/enc/"):
		codings := strings.Split(strings.TrimPrefix(r.URL.Path, "/enc/"), ",")
		for _, c := range codings {
			var buf bytes.Buffer
			switch c {
			case "gzip", "x-gzip":
				z := gzip.NewWriter(&buf)
				z.Write(body)
				z.Close()
			case "deflate":
				z := zlib.NewWriter(&buf)
				z.Write(body)
				z.Close()
			default:
				buf.Write(body)
			}
			body = buf.Bytes()
		}
		w.Header().Set("Content-Encoding", strings.Join(codings, ", "))
		if r.Method != http.MethodHead {
			w.Write(body)
		}
	default:
		w.Write(body)
	}
}

// TestEncodedOrPartialAnswersWithheld: a credentialed answer is decoded
// when it is the gzip Yett asked for, and withheld (WithheldError, with
// the status) when it is an encoding Yett did not ask for or a 206.
func TestEncodedOrPartialAnswersWithheld(t *testing.T) {
	rec := &recorder{handle: echoHandler}
	srv, ex, _ := tlsServer(t, rec, Config{})
	for _, c := range []struct {
		path, method string
		reason       string
	}{
		{"/enc/gzip", "GET", ""}, {"/enc/x-gzip", "GET", ""}, {"/enc/identity", "GET", ""}, {"/enc/gzip", "HEAD", ""},
		{"/enc/deflate", "GET", WithheldEncoded}, {"/enc/br", "GET", WithheldEncoded}, {"/enc/gzip,gzip", "GET", WithheldEncoded},
		{"/enc/compress", "GET", WithheldEncoded}, {"/partial", "GET", WithheldPartial},
	} {
		t.Run(c.method+c.path, func(t *testing.T) {
			resp, err := ex.Do(context.Background(), Request{Method: c.method, URL: exURL(srv, c.path)}, bearer())
			if c.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				assertNoCanary(t, "body", string(resp.Body))
				if c.method == "GET" && !strings.Contains(string(resp.Body), "you sent: Bearer "+Redacted) {
					t.Fatalf("body %q", resp.Body)
				}
				if resp.Header.Get("Content-Encoding") != "" && c.path != "/enc/identity" {
					t.Fatalf("Content-Encoding %q left on a decoded body", resp.Header.Get("Content-Encoding"))
				}
				return
			}
			var w *WithheldError
			if !errors.As(err, &w) || !errors.Is(err, ErrResponseWithheld) || w.Reason != c.reason || w.Status == 0 || resp != nil {
				t.Fatalf("got %v %v, want withheld %s", resp, err, c.reason)
			}
			assertNoCanary(t, "error", err.Error())
		})
	}
	if got := rec.last().Get("Accept-Encoding"); got != "gzip" {
		t.Fatalf("Yett asked for %q, want gzip", got)
	}
	t.Run("agent may not choose the encoding or the range", func(t *testing.T) {
		before := rec.hits.Load()
		for _, h := range []string{"Accept-Encoding", "accept-encoding", "Range", "If-Range", "TE"} {
			_, err := ex.Do(context.Background(), Request{URL: exURL(srv, "/"), Headers: map[string]string{h: "gzip"}}, bearer())
			if !errors.Is(err, ErrForbiddenHeader) {
				t.Errorf("%s: %v, want ErrForbiddenHeader", h, err)
			}
		}
		_, err := ex.Do(context.Background(), Request{URL: exURL(srv, "/"), Headers: map[string]string{"X-A": "1", "x-a": "2"}}, bearer())
		if !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("a header in two cases: %v", err)
		}
		if rec.hits.Load() != before {
			t.Fatal("a refused request was sent")
		}
	})
}
