// Package bearer authenticates HTTP requests by bearer token (RFC 6750):
// static tokens the operator issues, kept only as SHA-256 hashes, and
// optionally JWT access tokens (RFC 9068 style) signed by an authorization
// server whose public keys are fetched from its JWKS URL. Each accepted
// token acts for a principal: a static token for the one configured with
// it, a JWT for JWTPrincipalPrefix + its principal claim.
//
// A refused request gets 401 (403 for a missing scope) with the
// WWW-Authenticate challenge RFC 6750 and RFC 9728 describe, naming the
// protected resource metadata; a JWT that cannot be checked because the
// issuer's keys cannot be fetched gets 503 with Retry-After, not 401.
//
// # Security
//
// Static tokens are compared by hash in constant time. JWTs must be
// signed with an asymmetric algorithm ("none" and HS* are refused), carry
// an expiry, the configured issuer and an accepted audience. Unknown key
// ids trigger at most one key-set fetch per refresh interval, and at most
// a few signature checks per token, so forged tokens cannot make the
// server fetch or verify without bound. Error descriptions are fixed
// texts, never a value taken from the token.
package bearer
