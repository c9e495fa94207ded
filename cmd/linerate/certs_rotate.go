package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/internal/cluster/mtls"
)

func (a *app) certsRevokeCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "revoke --dir DIR NAME|SERIAL...",
		Short: "Revoke certificates: add them to DIR's revocation list (ca.crl), signed by DIR's CA",
		Long: `revoke adds each certificate — NAME (DIR/NAME.crt) or a SERIAL in hexadecimal
as 'certs issue' prints it — to DIR/ca.crl, a revocation list signed by the CA
(so it needs ca.key, and hosts trust it whoever copies it). Copy ca.crl to every
host's --tls-dir and send the agents SIGHUP: they then refuse the revoked
coordinators, and coordinators refuse revoked agents at their next dial.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("give the NAME or SERIAL of at least one certificate to revoke, e.g. linerate certs revoke --dir DIR coord-old")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return usagef("--dir: required: the certificate directory that holds the CA (linerate certs init)")
			}
			var serials []*big.Int
			names := map[string]string{}
			for _, arg := range args {
				s, name, err := revokeTarget(dir, arg)
				if err != nil {
					return err
				}
				serials = append(serials, s)
				names[mtls.Serial(s)] = name
			}
			added, path, err := mtls.Revoke(dir, serials, time.Now())
			if err != nil {
				return certsErr(err)
			}
			for _, s := range serials {
				what := "serial " + mtls.Serial(s)
				if n := names[mtls.Serial(s)]; n != "" {
					what = fmt.Sprintf("%q (%s)", n, what)
				}
				if slices.ContainsFunc(added, func(x *big.Int) bool { return x.Cmp(s) == 0 }) {
					fmt.Fprintf(a.stdout, "revoked %s\n", what)
				} else {
					fmt.Fprintf(a.stdout, "%s was revoked already\n", what)
				}
			}
			fmt.Fprintf(a.stdout, "wrote %s: copy it to every host's --tls-dir and send the agents SIGHUP\n", path)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "certificate directory holding the CA")
	return cmd
}

// revokeTarget resolves a revoke argument: a certificate in dir by name,
// else a hexadecimal serial.
func revokeTarget(dir, arg string) (*big.Int, string, error) {
	if mtls.CheckName(arg) == nil {
		cert, err := mtls.ReadCertificate(dir, arg)
		if err == nil {
			return cert.SerialNumber, arg, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("revoke %q: %w", arg, err)
		}
	}
	s, err := mtls.ParseSerial(arg)
	if err != nil {
		return nil, "", usagef("revoke %q: no certificate %s and not a serial (%v): give a certificate name in --dir or its serial as 'certs issue' printed it",
			arg, mtls.CertPath(dir, arg), err)
	}
	return s, "", nil
}

func (a *app) certsRenewCommand() *cobra.Command {
	var (
		dir       string
		n         int
		revokeOld bool
	)
	cmd := &cobra.Command{
		Use:   "renew --dir DIR NAME [--days N] [--revoke-old]",
		Short: "Re-issue NAME's certificate: same role and names, new key and serial",
		Long: `renew replaces DIR/NAME.crt and DIR/NAME.key with a certificate of the same
role and names (SANs), a new key and serial, signed by DIR's CA. Copy the pair
to the host and send its agent SIGHUP (a coordinator uses it at its next dial).
--revoke-old adds the replaced certificate to ca.crl.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("give the NAME of one certificate to renew (got %d arguments), e.g. linerate certs renew --dir DIR sender-1", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return usagef("--dir: required: the certificate directory that holds the CA and NAME.crt")
			}
			if n <= 0 {
				return usagef("--days %d: want a positive number of days", n)
			}
			leaf, old, files, err := mtls.Renew(dir, args[0], days(n))
			if errors.Is(err, fs.ErrNotExist) {
				return usageError{err}
			}
			if err != nil {
				return certsErr(err)
			}
			a.printLeaf(leaf, files)
			if revokeOld {
				_, path, err := mtls.Revoke(dir, []*big.Int{old.SerialNumber}, time.Now())
				if err != nil {
					return fmt.Errorf("renewed %q, but revoking the old certificate failed: %w", args[0], err)
				}
				fmt.Fprintf(a.stdout, "revoked the old certificate (serial %s)\nwrote %s: copy it to every host's --tls-dir and send the agents SIGHUP\n", mtls.Serial(old.SerialNumber), path)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "dir", "", "certificate directory holding the CA and NAME's certificate")
	fl.IntVar(&n, "days", int(mtls.DefaultLeafValidity/(24*time.Hour)), "validity in days (never beyond the CA's)")
	fl.BoolVar(&revokeOld, "revoke-old", false, "also revoke the certificate it replaces (ca.crl)")
	return cmd
}
