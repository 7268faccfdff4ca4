package inventory

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Gateway is what a drill asks of the running gateway (*gateway.Gateway
// satisfies it): a connection for Yett's own drill client, served as an
// agent's is.
type Gateway interface {
	DrillConn() (net.Conn, error)
}

// drillClient is an MCP client session over the gateway's drill
// connection: it lists tools and calls them as an agent does.
type drillClient struct {
	session *mcp.ClientSession
	calls   int
	drill   string
}

func dialDrill(ctx context.Context, gw Gateway, drillID string) (*drillClient, error) {
	if gw == nil {
		return nil, fmt.Errorf("no gateway runs in this Yett (another Yett serves agents, or the gateway could not start)")
	}
	conn, err := gw.DrillConn()
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "yett-revocation-drill", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &drillClient{session: s, drill: drillID}, nil
}

func (d *drillClient) close() {
	if d != nil {
		d.session.Close()
	}
}

// answer is a tool call's answer: the code the agent would branch on and
// its text.
type answer struct {
	IsError bool
	Code    string
	Text    string
}

// call calls tool with args (and an idempotency key of the drill's own).
func (d *drillClient) call(ctx context.Context, tool string, args map[string]any) (answer, error) {
	d.calls++
	a := map[string]any{}
	for k, v := range args {
		a[k] = v
	}
	a["idempotency_key"] = fmt.Sprintf("yett-drill-%s-%d", d.drill, d.calls)
	raw, _ := json.Marshal(a)
	res, err := d.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(raw)})
	if err != nil {
		return answer{}, err
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	text := strings.Join(texts, "\n")
	code, _, _ := strings.Cut(text, ":")
	return answer{IsError: res.IsError, Code: code, Text: text}, nil
}

// tools lists the tools an agent sees now.
func (d *drillClient) tools(ctx context.Context) ([]string, error) {
	var names []string
	for t, err := range d.session.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, t.Name)
	}
	return names, nil
}
