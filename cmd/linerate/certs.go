package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/internal/cluster/bundle"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/enum"
)

type certsFlags struct {
	dir, name, role, bundle string
	hosts, join             []string
	days                    int
	force                   bool
}

func (a *app) certsCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "certs",
		Short: "Create the CA and the certificates for mutual TLS between coordinator and agents",
		Long: `certs keeps a certificate directory: a CA (ca.crt, ca.key), the cluster's
gossip key (gossip.key) and one certificate per agent or coordinator
(NAME.crt, NAME.key), ECDSA P-256, keys mode 0600. Agents and coordinators
load their own NAME.crt/NAME.key, ca.crt and gossip.key from it (--tls-dir)
and accept only peers the CA signed and its revocation list (ca.crl, from
'certs revoke') does not name. Copy ca.crt, ca.crl, gossip.key and a host's
own pair to each host; ca.key stays where certificates are issued: agents and
coordinators refuse a directory holding it, or a key group or others can read.
Leaves last 90 days by default: 'certs renew' re-issues one, SIGHUP makes an
agent load it.`,
	})
	cmd.AddCommand(a.certsInitCommand(), a.certsIssueCommand(), a.certsRevokeCommand(), a.certsRenewCommand(), a.certsGossipKeyCommand())
	return cmd
}

func (a *app) certsInitCommand() *cobra.Command {
	f := &certsFlags{}
	cmd := &cobra.Command{
		Use:   "init --dir DIR",
		Short: "Create a CA and the gossip key in DIR (ca.crt, ca.key, gossip.key)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.dir == "" {
				return usagef("--dir: required: the certificate directory to create the CA in")
			}
			if f.days <= 0 {
				return usagef("--days %d: want a positive number of days", f.days)
			}
			if _, err := os.Lstat(gossip.KeyPath(f.dir)); err == nil && !f.force {
				return fmt.Errorf("init CA in %s: %s: %w (pass --force to replace it, with the CA)", f.dir, gossip.KeyPath(f.dir), mtls.ErrExist)
			}
			ca, files, err := mtls.Init(f.dir, mtls.CAOptions{CommonName: f.name, Validity: days(f.days)}, f.force)
			if err != nil {
				return certsErr(err)
			}
			kp, err := gossip.InitKey(f.dir, f.force)
			if err != nil {
				return err
			}
			files = append(files, kp)
			if f.force {
				a.log.Warn("replaced the CA and the gossip key: certificates issued by the old CA no longer verify, and every member needs the new gossip key", "dir", f.dir)
			}
			fmt.Fprintf(a.stdout, "CA %q valid until %s\n", ca.Cert.Subject.CommonName, ca.Cert.NotAfter.UTC().Format(time.DateOnly))
			for _, p := range files {
				fmt.Fprintf(a.stdout, "wrote %s\n", p)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "certificate directory (created with mode 0700 when missing)")
	fl.StringVar(&f.name, "name", "linerate CA", "the CA's common name")
	fl.IntVar(&f.days, "days", int(mtls.DefaultCAValidity/(24*time.Hour)), "validity in days")
	fl.BoolVar(&f.force, "force", false, "replace an existing CA and gossip key (every certificate it issued stops verifying)")
	return cmd
}

func (a *app) certsGossipKeyCommand() *cobra.Command {
	f := &certsFlags{}
	cmd := &cobra.Command{
		Use:   "gossip-key --dir DIR",
		Short: "Write a fresh gossip key into DIR (gossip.key, mode 0600), for a directory made before 'certs init' wrote one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.dir == "" {
				return usagef("--dir: required: the certificate directory to write %s into", gossip.KeyFile)
			}
			if fi, err := os.Stat(f.dir); err != nil || !fi.IsDir() {
				return usagef("--dir %s: not a directory (create one with 'linerate certs init --dir %s')", f.dir, f.dir)
			}
			p, err := gossip.InitKey(f.dir, f.force)
			if err != nil {
				return err
			}
			if f.force {
				a.log.Warn("replaced the gossip key: every agent and coordinator needs the new one", "file", p)
			}
			fmt.Fprintf(a.stdout, "wrote %s\n", p)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "certificate directory")
	fl.BoolVar(&f.force, "force", false, "replace an existing gossip key")
	return cmd
}

func (a *app) certsIssueCommand() *cobra.Command {
	f := &certsFlags{}
	cmd := &cobra.Command{
		Use:   "issue --dir DIR --name NAME --role " + enum.Usage(mtls.Roles()) + " [--host H1,H2] [--bundle OUT [--join HOST:PORT...]]",
		Short: "Issue a certificate for an agent or a coordinator, signed by DIR's CA",
		Long: `issue writes DIR/NAME.crt and DIR/NAME.key, signed by DIR's CA, usable as TLS
server and client certificate, with the role in the certificate (URI SAN
linerate://role/ROLE). NAME is the common name and, when it is a DNS name or
an IP address, a SAN, so a coordinator can dial an agent by its name; --host
adds the DNS names and IP addresses the holder is reached at.

--bundle OUT also writes what the host needs, laid out as its
/etc/linerate: OUT/NAME/ and OUT/NAME.tar.gz holding agent.yaml (or
coordinator.yaml for a coordinator: tls-dir, cert-name and --join) and
tls/ with NAME.crt, NAME.key, ca.crt, ca.crl when there is one and
gossip.key, in the modes agents require. ca.key never goes into a
bundle. On the host: tar -xzf NAME.tar.gz -C /etc/linerate, then add
role and iface to an agent's agent.yaml.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.dir == "" {
				return usagef("--dir: required: the certificate directory that holds the CA (linerate certs init)")
			}
			if f.name == "" {
				return usagef("--name: required: the agent's or coordinator's name (its node name), e.g. --name sender-1")
			}
			if err := mtls.CheckName(f.name); err != nil {
				return usagef("--name: %w", err)
			}
			role, err := mtls.ParseRole(f.role)
			if err != nil {
				return usagef("--role: %w", err)
			}
			if f.days <= 0 {
				return usagef("--days %d: want a positive number of days", f.days)
			}
			if len(f.join) > 0 && f.bundle == "" {
				return usagef("--join: only with --bundle DIR (it goes into the bundle's configuration file)")
			}
			leaf, files, err := mtls.Issue(f.dir, mtls.LeafOptions{Name: f.name, Role: role, Hosts: f.hosts, Validity: days(f.days)}, f.force)
			if err != nil {
				return certsErr(err)
			}
			a.printLeaf(leaf, files)
			if f.bundle == "" {
				return nil
			}
			b, err := bundle.Write(bundle.Options{CADir: f.dir, Name: f.name, Role: role, Join: f.join, Out: f.bundle, Force: f.force})
			if err != nil {
				return err
			}
			for _, p := range append(b.Files, b.Archive) {
				fmt.Fprintf(a.stdout, "wrote %s\n", p)
			}
			fmt.Fprintf(a.stdout, "bundle for %s: copy %s to the host and unpack it there: tar -xzf %s -C %s\n", f.name, b.Archive, filepath.Base(b.Archive), bundle.ConfigDir)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "certificate directory holding the CA")
	fl.StringVar(&f.name, "name", "", "certificate name: the agent's node name or the coordinator's name")
	fl.StringVar(&f.role, "role", "", "role: "+enum.Or(mtls.Roles()))
	fl.StringSliceVar(&f.hosts, "host", nil, "DNS names and IP addresses to add as SANs, comma-separated")
	fl.StringVar(&f.bundle, "bundle", "", "also write the host's bootstrap bundle into this directory: NAME/ laid out as the host's "+bundle.ConfigDir+" and NAME.tar.gz of it (the certificate and key, ca.crt, gossip.key and agent.yaml or coordinator.yaml; never ca.key)")
	fl.StringSliceVar(&f.join, "join", nil, "gossip addresses (host:port) the bundle's configuration joins, repeatable")
	fl.IntVar(&f.days, "days", int(mtls.DefaultLeafValidity/(24*time.Hour)), "validity in days (never beyond the CA's)")
	fl.BoolVar(&f.force, "force", false, "replace an existing NAME.crt/NAME.key")
	return cmd
}

// printLeaf prints what issue and renew wrote.
func (a *app) printLeaf(leaf *mtls.Leaf, files []string) {
	fmt.Fprintln(a.stdout, mtls.Describe(leaf.Cert))
	for _, p := range files {
		fmt.Fprintf(a.stdout, "wrote %s\n", p)
	}
}

// certsErr marks what is the caller's input (a name, a role, a host) as
// a usage error; files that exist and I/O stay failures.
func certsErr(err error) error {
	if errors.Is(err, mtls.ErrName) || errors.Is(err, mtls.ErrRole) || errors.Is(err, mtls.ErrHost) {
		return usageError{err}
	}
	return err
}

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }
