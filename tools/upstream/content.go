package upstream

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/tools"
)

// Content is what a program gets for each block of an upstream result
// that holds more than text (an image, audio, an embedded resource, a
// resource link): the blocks in order, each as one of these objects. A
// result of text blocks alone is still the text (or the JSON it holds).
//
//	{type: "text", text}
//	{type: "image" | "audio", mimeType, data}        data: base64
//	{type: "resource", uri, mimeType?, text | data}  data: base64 of a blob
//	{type: "resource_link", uri, name, mimeType?, description?}
//
// Binary data counts against the run's output budget like any value.
type Content struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Data        string `json:"data,omitempty"`
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// contentValue converts every block of an upstream result.
func contentValue(server string, blocks []mcp.Content) (json.RawMessage, error) {
	out := make([]Content, 0, len(blocks))
	for _, b := range blocks {
		switch c := b.(type) {
		case *mcp.TextContent:
			out = append(out, Content{Type: "text", Text: c.Text})
		case *mcp.ImageContent:
			out = append(out, Content{Type: "image", MIMEType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)})
		case *mcp.AudioContent:
			out = append(out, Content{Type: "audio", MIMEType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)})
		case *mcp.EmbeddedResource:
			r := c.Resource
			if r == nil {
				continue
			}
			e := Content{Type: "resource", URI: r.URI, MIMEType: r.MIMEType, Text: r.Text}
			if r.Blob != nil {
				e.Data = base64.StdEncoding.EncodeToString(r.Blob)
			}
			out = append(out, e)
		case *mcp.ResourceLink:
			out = append(out, Content{Type: "resource_link", URI: c.URI, Name: c.Name, MIMEType: c.MIMEType,
				Description: CleanText(c.Description, MaxDescriptionBytes)})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, tools.Failed(fmt.Sprintf("upstream server %q: bad content: %v", server, err), "")
	}
	return b, nil
}
