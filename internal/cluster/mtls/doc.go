// Package mtls is the mutual TLS between the linerate coordinator and its
// agents: a small certificate authority (IssueCA, IssueLeaf), the
// certificate directory that `linerate certs` writes and every process
// loads (Init, Issue, Load), and the TLS 1.3 configurations and gRPC
// transport options built from it (ServerTLS, ClientTLS, ServerCredentials,
// ClientCredentials).
//
// A certificate directory holds the CA (ca.crt, ca.key) and one leaf per
// host or coordinator (NAME.crt, NAME.key). Keys are ECDSA P-256 in PKCS #8
// PEM files of mode 0600. Every leaf carries both the server and the client
// auth usage, so one certificate serves an agent's gRPC server and a
// coordinator's client alike, and its role as a URI SAN
// (linerate://role/agent) and as the subject's OU. Servers require and
// verify a client certificate signed by the directory's CA; plaintext is an
// explicit choice (Options.Insecure) that callers must log.
//
// A directory served or dialed from must not hold ca.key nor a key others
// can read (CheckServingDir). The CA revokes certificates in ca.crl, a CRL
// it signs (Revoke), which both ends check for their peer. Credentials are
// a Reloader: Reload re-reads certificate, CA and revocation list for new
// handshakes (an agent's SIGHUP) and keeps the old ones when that fails.
package mtls
