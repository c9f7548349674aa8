// Package openapi makes the operations of an HTTP API into tools, from the
// API's OpenAPI description (3.0, 3.1 or Swagger 2.0; JSON or YAML), so a
// service with a REST API and no MCP server can be composed like any
// other tool source. The host makes every call: programs never see the
// API's credentials.
//
//	src, err := openapi.Load(ctx, openapi.Config{
//		Name: "github", Spec: "api.github.com.json",
//		Auth: openapi.Auth{Type: "bearer", Env: "GITHUB_TOKEN"},
//		Include: []string{"tag:issues"},
//	})
//	added, errs := src.AddTo(catalog)
//
// Load reads the spec (a file, or a URL within Config.SpecTimeout) and
// makes the tools; Start does the same in the background, so that a spec
// behind a slow or unreachable URL never delays start-up. Errors are
// *Error values naming the source and, when known, the place in the spec
// ("spec.yaml:12"). The spec is parsed by libopenapi (chosen over
// kin-openapi for speed: it parses GitHub's 1,223-operation description
// about 2.5 times faster, allocating a quarter of the memory), whose YAML
// nodes also give every finding its line; BenchmarkLoadGitHub measures
// the whole load.
//
// # Tools
//
// Each operation is a tool named <source>_<operationId in snake case>
// ("issues/create" → github_issues_create), or <source>_<method>_<path
// words> when it has no operationId; a name is at most 64 characters (a
// longer one is cut and ends with a hash) and unique in the source (a
// clash gets a hash of method and path). Its description is the
// operation's summary, the paragraphs of its description that fit in
// MaxDescriptionBytes (markdown links reduced to their text, HTML tags and
// invisible characters removed), and its method and path.
//
// The input schema is a closed object whose properties are the
// operation's parameters, by name, whatever their location (path, query,
// header, cookie): a model writes {"owner": "octo", "repo": "hello",
// "per_page": 10}; the request body, if any, is the one property "body"
// (BodyProperty), so a parameter is never confused with a field of the
// body. A parameter whose name is taken (by another location's parameter,
// or "body") is named <in>_<name>. Path parameters are required; the
// header parameters Accept, Content-Type and Authorization are not
// arguments (the host sets them). The output schema is the JSON schema of
// the first success answer (200, then 2xx, then 2XX).
//
// Schemas are converted to JSON Schema 2020-12 (schema.go says how);
// $refs to the spec's schemas become $defs, converted once per source and
// shared by its tools, which therefore must not modify them.
//
// Effects follow the method: GET, HEAD, OPTIONS read-only and idempotent;
// DELETE destructive and idempotent; PUT idempotent; POST and PATCH
// neither, unless the operation says x-idempotent: true. All are open
// world. The broker retries transient failures of idempotent tools only.
//
// Include and Exclude select operations by operationId glob, tag
// ("tag:issues") or path glob ("/repos/**", "DELETE /repos/**").
//
// # Calls
//
// A call fills the path (each value escaped as one segment; "." and ".."
// refused), the query (form style, arrays exploded unless the parameter
// says otherwise; spaceDelimited, pipeDelimited and deepObject too), the
// headers and cookies, and the body (JSON as given; form-urlencoded and
// multipart from an object; any other media type as the string given). A
// JSON answer is the result as a value; an empty one is null; any other
// is {type: "text", mimeType, text}, binary content summarized by its
// size. An answer outside 2xx is an E_TOOL_FAILED *sandbox.Error with the
// status and a short excerpt of the body (a JSON answer's "message" when
// it has one): 429, 502, 503 and 504 are retryable (with the server's
// Retry-After in the hint), 404 and 410 unavailable. A timeout or a lost
// connection is retryable for an idempotent operation; for any other the
// hint says the request may have taken effect.
//
// # Security
//
// A source's spec, base URL and secret names come from its configuration,
// which the caller must trust as it trusts an MCP server's: a project's
// sources are under project trust. The secret (Auth) is read once, by
// Load, from an environment variable or a file, and sent only to the base
// URL's origin (upstream.OriginOf): a request to any other origin is
// refused below the client's redirect handling, and a redirect to another
// origin fails the call. The secret never appears in a result, an error,
// a description or a log: an answer that echoes it has it replaced by
// [REDACTED], in every form it was sent in, and error text also goes
// through tools.Redact. A spec's $refs stay inside the spec: no file is
// read and no URL fetched on its say-so. Spec files and secret files are
// read bounded (regular files only; MaxSpecBytes, MaxSecretBytes), a
// spec URL within a deadline, and answers are cut off past
// Config.MaxResponseBytes. Spec text is untrusted: descriptions are
// cleaned and capped, names sanitized.
//
// # Limits
//
// Only the answer's body is returned: headers (GitHub's Link pagination,
// say) are not. Callbacks, webhooks, links, per-operation servers and
// OpenAPI 3.2's additional operations are ignored; a parameter's content other than JSON is sent
// as JSON text. A spec with model errors (a $ref to nothing) does not
// load: its first error is reported with its line. Basic, bearer and API
// key (header or query) authentication only: no OAuth flows, no per-
// operation security requirements (every call carries the source's
// credentials).
package openapi
