package mtls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIssueCA(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ca, err := IssueCA(CAOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	c := ca.Cert
	if !c.IsCA || !c.BasicConstraintsValid || !c.MaxPathLenZero {
		t.Errorf("not a path-length-0 CA: IsCA=%v BasicConstraintsValid=%v MaxPathLenZero=%v", c.IsCA, c.BasicConstraintsValid, c.MaxPathLenZero)
	}
	if c.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("key usage %v lacks CertSign", c.KeyUsage)
	}
	if pub, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("public key %T, want ECDSA P-256", c.PublicKey)
	}
	if got := c.NotAfter.Sub(now); got < 3650*24*time.Hour || got > 3660*24*time.Hour {
		t.Errorf("validity %v, want about 10 years", got)
	}
	if !c.NotBefore.Before(now) {
		t.Errorf("NotBefore %v not before issue time %v (clock skew)", c.NotBefore, now)
	}
	if c.Subject.CommonName != "linerate CA" {
		t.Errorf("CN %q", c.Subject.CommonName)
	}
	if err := c.CheckSignatureFrom(c); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
}

func TestIssueLeaf(t *testing.T) {
	ca, err := IssueCA(CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.IssueLeaf(LeafOptions{Name: "sender-1", Role: RoleAgent, Hosts: []string{"198.18.0.2", "sender-1.lab", " ", "sender-1", "::1"}})
	if err != nil {
		t.Fatal(err)
	}
	c := leaf.Cert
	if err := c.CheckSignatureFrom(ca.Cert); err != nil {
		t.Fatalf("not signed by the CA: %v", err)
	}
	if c.IsCA {
		t.Error("leaf is a CA")
	}
	if !slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageServerAuth) || !slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		t.Errorf("EKU %v, want server and client auth", c.ExtKeyUsage)
	}
	if got, want := c.DNSNames, []string{"sender-1", "sender-1.lab"}; !slices.Equal(got, want) {
		t.Errorf("DNS SANs %v, want %v", got, want)
	}
	var ips []string
	for _, ip := range c.IPAddresses {
		ips = append(ips, ip.String())
	}
	if want := []string{"198.18.0.2", "::1"}; !slices.Equal(ips, want) {
		t.Errorf("IP SANs %v, want %v", ips, want)
	}
	if len(c.URIs) != 1 || c.URIs[0].String() != "linerate://role/agent" {
		t.Errorf("URIs %v, want [linerate://role/agent]", c.URIs)
	}
	if got := c.Subject.OrganizationalUnit; !slices.Equal(got, []string{"agent"}) {
		t.Errorf("OU %v", got)
	}
	if r, err := RoleOf(c); err != nil || r != RoleAgent {
		t.Errorf("RoleOf = %q, %v", r, err)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "sender-1.lab", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("verify as server sender-1.lab: %v", err)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("verify as client: %v", err)
	}
}

func TestIssueLeafNeverOutlivesCA(t *testing.T) {
	ca, err := IssueCA(CAOptions{Validity: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.IssueLeaf(LeafOptions{Name: "c", Role: RoleCoordinator})
	if err != nil {
		t.Fatal(err)
	}
	if leaf.Cert.NotAfter.After(ca.Cert.NotAfter) {
		t.Errorf("leaf until %v outlives CA until %v", leaf.Cert.NotAfter, ca.Cert.NotAfter)
	}
}

func TestIssueLeafRefuses(t *testing.T) {
	ca, err := IssueCA(CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    LeafOptions
		is   error
		msg  string
	}{
		{"bad role", LeafOptions{Name: "a", Role: "admin"}, ErrRole, "valid roles are agent and coordinator"},
		{"no role", LeafOptions{Name: "a"}, ErrRole, "valid roles"},
		{"empty name", LeafOptions{Role: RoleAgent}, ErrName, "letters, digits"},
		{"slash", LeafOptions{Name: "../x", Role: RoleAgent}, ErrName, "../x"},
		{"ca", LeafOptions{Name: "CA", Role: RoleAgent}, ErrName, "CA's own"},
		{"long", LeafOptions{Name: strings.Repeat("a", 64), Role: RoleAgent}, ErrName, ""},
		{"bad host", LeafOptions{Name: "a", Role: RoleAgent, Hosts: []string{"not a host"}}, ErrHost, `host "not a host"`},
		// The coordinator verifies an agent against its node name: it must
		// be a DNS name the certificate can carry.
		{"agent with _", LeafOptions{Name: "sender_1", Role: RoleAgent}, ErrName, `agent name "sender_1" is not a DNS name`},
		{"agent label ending in -", LeafOptions{Name: "sender-.lab", Role: RoleAgent}, ErrName, `e.g. "sender.lab"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ca.IssueLeaf(tc.o)
			if err == nil {
				t.Fatal("issued")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v is not %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%q does not say %q", err, tc.msg)
			}
		})
	}
}

// A coordinator is never dialed by name: '_' is fine in its name.
func TestCoordinatorNameNeedNotBeDNS(t *testing.T) {
	ca, err := IssueCA(CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.IssueLeaf(LeafOptions{Name: "team_a", Role: RoleCoordinator})
	if err != nil {
		t.Fatal(err)
	}
	if len(leaf.Cert.DNSNames) != 0 || leaf.Cert.Subject.CommonName != "team_a" {
		t.Errorf("DNS SANs %v, CN %q", leaf.Cert.DNSNames, leaf.Cert.Subject.CommonName)
	}
	if got := time.Until(leaf.Cert.NotAfter); got < 89*24*time.Hour || got > 91*24*time.Hour {
		t.Errorf("default leaf validity %v, want 90 days", got)
	}
}

func TestNameThatIsAnIP(t *testing.T) {
	ca, err := IssueCA(CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.IssueLeaf(LeafOptions{Name: "198.18.0.9", Role: RoleAgent})
	if err != nil {
		t.Fatal(err)
	}
	if len(leaf.Cert.DNSNames) != 0 || len(leaf.Cert.IPAddresses) != 1 || !leaf.Cert.IPAddresses[0].Equal(net.ParseIP("198.18.0.9")) {
		t.Errorf("DNS %v IP %v, want only IP 198.18.0.9", leaf.Cert.DNSNames, leaf.Cert.IPAddresses)
	}
}

func TestRoleOf(t *testing.T) {
	ca, err := IssueCA(CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RoleOf(ca.Cert); !errors.Is(err, ErrRole) {
		t.Errorf("CA certificate: %v, want ErrRole", err)
	}
	for _, r := range Roles() {
		got, err := ParseRole(string(r))
		if err != nil || got != r {
			t.Errorf("ParseRole(%q) = %q, %v", r, got, err)
		}
	}
}

// A certificate is described by its role, name, end, names and serial;
// one without names says none.
func TestDescribe(t *testing.T) {
	ca, err := IssueCA(CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.IssueLeaf(LeafOptions{Name: "sender-1", Role: RoleAgent, Hosts: []string{"198.18.0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	c := leaf.Cert
	want := `agent "sender-1" valid until ` + c.NotAfter.UTC().Format(time.DateOnly) + ", names: sender-1, 198.18.0.2, serial " + Serial(c.SerialNumber)
	if got := Describe(c); got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	coord, err := ca.IssueLeaf(LeafOptions{Name: "team_a", Role: RoleCoordinator})
	if err != nil {
		t.Fatal(err)
	}
	if got := Describe(coord.Cert); !strings.Contains(got, `coordinator "team_a"`) || !strings.Contains(got, "names: none") {
		t.Errorf("Describe = %q", got)
	}
}
