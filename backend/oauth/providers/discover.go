package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// MaxMetadataBytes bounds a metadata document. Real documents are a few KiB.
const MaxMetadataBytes = 1 << 20

// DiscoveryTimeout bounds Discover when the caller's context has no deadline.
const DiscoveryTimeout = 10 * time.Second

// maxRedirects bounds same-host redirects during discovery.
const maxRedirects = 5

// More errors Discover returns; see also the errors of ParseMetadata.
var (
	// ErrMetadataTooLarge means a document was longer than MaxMetadataBytes.
	ErrMetadataTooLarge = errors.New("metadata document is too large")
	// ErrRedirectRefused means the server redirected to another host, from
	// https to http, or too many times.
	ErrRedirectRefused = errors.New("metadata redirect refused")
	// ErrNoMetadata means neither well-known location served a document.
	ErrNoMetadata = errors.New("no authorization server metadata at the issuer")
)

// discoveryTimeout is DiscoveryTimeout, a variable so that a test can wait
// less than ten seconds for it.
var discoveryTimeout = DiscoveryTimeout

// Discover fetches and checks the metadata of issuer. It asks first for the
// OpenID Connect document ({issuer}/.well-known/openid-configuration), then,
// if that location answers with anything but 200, for the RFC 8414 document
// (/.well-known/oauth-authorization-server inserted before the issuer's
// path, RFC 8414 §3.1). A document that is found but fails the checks of
// ParseMetadata is an error; the other location is not tried, because a
// wrong document is not the same as a missing one.
//
// issuer itself must pass the rules of Validate(true). client may be nil
// (http.DefaultClient's transport is used); it is not modified: Discover
// uses a copy whose redirect policy refuses other hosts. When ctx has no
// deadline, DiscoveryTimeout applies.
//
// Errors wrap ErrNoMetadata, ErrMetadataTooLarge, ErrRedirectRefused, or an
// error of ParseMetadata; transport errors are returned wrapped as they are.
func Discover(ctx context.Context, client *http.Client, issuer string) (*Metadata, error) {
	if err := checkURL("issuer", issuer, true); err != nil {
		return nil, err
	}
	u, err := url.Parse(issuer)
	if err != nil || u.RawQuery != "" || u.ForceQuery {
		return nil, fmt.Errorf("%w: issuer has a query", ErrInvalidMetadata)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, discoveryTimeout)
		defer cancel()
	}
	c := discoveryClient(client)

	var statuses []string
	for _, loc := range wellKnownURLs(u) {
		body, status, err := fetch(ctx, c, loc.url)
		if err != nil {
			return nil, fmt.Errorf("discover %s: %w", loc.name, err)
		}
		if status != http.StatusOK {
			statuses = append(statuses, fmt.Sprintf("%s: HTTP %d", loc.name, status))
			continue
		}
		m, err := ParseMetadata(issuer, body)
		if err != nil {
			return nil, fmt.Errorf("discover %s: %w", loc.name, err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("%w (%s)", ErrNoMetadata, strings.Join(statuses, "; "))
}

type wellKnown struct{ name, url string }

// wellKnownURLs lists where issuer's metadata may live, in the order asked.
func wellKnownURLs(issuer *url.URL) []wellKnown {
	// Both specifications drop a terminating "/" of the issuer's path. OIDC
	// Discovery §4 appends the well-known suffix to the path; RFC 8414 §3.1
	// inserts it between the host and the path.
	path := strings.TrimSuffix(issuer.EscapedPath(), "/")
	origin := issuer.Scheme + "://" + issuer.Host
	return []wellKnown{
		{"openid-configuration", origin + path + "/.well-known/openid-configuration"},
		{"oauth-authorization-server", origin + "/.well-known/oauth-authorization-server" + path},
	}
}

// discoveryClient copies client (never changing the caller's) and gives the
// copy a redirect policy that stays on the original host and scheme.
func discoveryClient(client *http.Client) *http.Client {
	var c http.Client
	if client != nil {
		c = *client
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		switch {
		case len(via) > maxRedirects:
			return fmt.Errorf("%w: more than %d redirects", ErrRedirectRefused, maxRedirects)
		case !strings.EqualFold(req.URL.Host, first.Host):
			return fmt.Errorf("%w: redirect to another host", ErrRedirectRefused)
		case req.URL.Scheme != first.Scheme:
			return fmt.Errorf("%w: redirect changes the scheme", ErrRedirectRefused)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &c
}

// fetch GETs loc and returns its body when the status is 200. Other
// statuses are returned with no body: their content is not needed and is
// not read into an error.
func fetch(ctx context.Context, c *http.Client, loc string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: issuer does not form a request URL", ErrInvalidMetadata)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			// url.Error repeats the URL; the cause is what matters here.
			err = uerr.Err
		}
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Drain a little so the connection can be reused, never much.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, resp.StatusCode, nil
	}
	if resp.ContentLength > MaxMetadataBytes {
		return nil, 0, fmt.Errorf("%w: Content-Length %d exceeds %d", ErrMetadataTooLarge, resp.ContentLength, MaxMetadataBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxMetadataBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("read metadata: %w", err)
	}
	if len(body) > MaxMetadataBytes {
		return nil, 0, fmt.Errorf("%w: more than %d bytes", ErrMetadataTooLarge, MaxMetadataBytes)
	}
	return body, resp.StatusCode, nil
}
