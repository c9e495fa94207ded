package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestDefaultPins(t *testing.T) {
	p, err := DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Kernel.Package, "linux-image-") || !strings.HasSuffix(p.Kernel.Package, "-cloud-amd64") {
		t.Errorf("kernel pin %+v is not a cloud-amd64 image", p.Kernel)
	}
	if p.Busybox.Package != BusyboxPackage {
		t.Errorf("busybox pin %+v, want package %s", p.Busybox, BusyboxPackage)
	}
	for _, pin := range p.List() {
		if pin.Version == "" || len(pin.SHA256) != 64 {
			t.Errorf("pin %+v lacks a version or a sha256", pin)
		}
	}
}

func TestParsePinsRejects(t *testing.T) {
	const sum = "4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754"
	good := "kernel linux-image-1-cloud-amd64 1 " + sum + "\nbusybox busybox-static 1:2 " + sum + "\n"
	if _, err := ParsePins("# comment\n\n" + good); err != nil {
		t.Fatalf("good pins: %v", err)
	}
	for name, text := range map[string]string{
		"short line":     "kernel linux-image-1 1\n",
		"bad sha256":     "kernel linux-image-1 1 ABC\nbusybox busybox-static 1 " + sum,
		"unknown role":   good + "initrd x 1 " + sum,
		"second kernel":  good + "kernel linux-image-2 1 " + sum,
		"no busybox":     "kernel linux-image-1 1 " + sum,
		"not an image":   "kernel vmlinuz 1 " + sum + "\nbusybox busybox-static 1 " + sum,
		"empty":          "",
		"uppercase hash": "kernel linux-image-1 1 " + strings.ToUpper(sum) + "\nbusybox busybox-static 1 " + sum,
	} {
		if p, err := ParsePins(text); err == nil {
			t.Errorf("%s: parsed as %+v", name, p)
		}
	}
}

func TestMadisonVersions(t *testing.T) {
	out := "linux-image-cloud-amd64 |  6.1.192-3 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n" +
		"linux-image-cloud-amd64 |  6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages\n" +
		"linux-image-cloud-amd64 |  6.1.176-1 | http://mirror/debian bookworm/main amd64 Packages\n"
	if got := fmt.Sprint(madisonVersions(out)); got != "[6.1.192-3 6.1.176-1]" {
		t.Errorf("versions %s", got)
	}
	if got := madisonVersions("N: Unable to locate package x\n"); len(got) != 0 {
		t.Errorf("versions of a missing package: %v", got)
	}
}

// testPins are pins for the fake apt; the sha256 of the kernel .deb is
// that of fakeDeb.
var (
	fakeDeb  = []byte("not really a .deb")
	testPins = Pins{
		Kernel:  Pin{Package: "linux-image-9.9.9-1-cloud-amd64", Version: "9.9.9-1", SHA256: sha256Hex256(fakeDeb)},
		Busybox: Pin{Package: BusyboxPackage, Version: "1:1.0-1", SHA256: sha256Hex256([]byte("busybox"))},
	}
)

func sha256Hex256(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// fakeApt records the commands it is asked to run; download writes
// content as the .deb of the package named, madison and depends print
// what they are given, anything else fails.
type fakeApt struct {
	calls    []string
	download map[string][]byte // package=version → .deb content; absent: apt fails
	madison  map[string]string // package → apt-cache madison output
	depends  string
}

func (a *fakeApt) run(_ context.Context, dir, name string, args ...string) (string, error) {
	call := name + " " + strings.Join(args, " ")
	a.calls = append(a.calls, call)
	switch {
	case name == "apt-get" && args[0] == "download":
		spec := args[len(args)-1]
		content, ok := a.download[spec]
		if !ok {
			return "", fmt.Errorf("run %s: exit status 100: E: Version not found", call)
		}
		pkg, ver, _ := strings.Cut(spec, "=")
		return "", os.WriteFile(filepath.Join(dir, pkg+"_"+strings.ReplaceAll(ver, ":", "%3a")+"_amd64.deb"), content, 0o644)
	case name == "apt-cache" && args[0] == "madison":
		return a.madison[args[1]], nil
	case name == "apt-cache" && args[0] == "depends":
		return a.depends, nil
	}
	return "", fmt.Errorf("run %s: not faked", call)
}

// writeEntry makes a complete cache entry for pins.Kernel.Package,
// recorded as verified against verified.
func writeEntry(t *testing.T, cache string, verified []Pin) {
	t.Helper()
	dir := filepath.Join(cache, testPins.Kernel.Package)
	for _, p := range []string{"root/boot/vmlinuz-x", "root/lib/modules/x/modules.dep", "busybox/bin/busybox"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta, err := json.Marshal(Kernel{Package: testPins.Kernel.Package, Release: "x", Vmlinuz: "root/boot/vmlinuz-x",
		ModulesDir: "root/lib/modules/x", Busybox: "busybox/bin/busybox", Verified: verified})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, kernelMeta), meta, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A cache entry verified against the current pins is used without apt:
// offline, with the archive moved on, it keeps working.
func TestFetchVerifiedEntryNeedsNoApt(t *testing.T) {
	cache := t.TempDir()
	writeEntry(t, cache, testPins.List())
	apt := &fakeApt{}
	k, err := (&fetcher{cacheDir: cache, pins: testPins, run: apt.run, log: hclog.NewNullLogger()}).fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(apt.calls) != 0 {
		t.Errorf("a verified entry ran %q", apt.calls)
	}
	if !k.VerifiedBy(testPins) || k.Release != "x" {
		t.Errorf("kernel %+v", k)
	}
}

// An entry verified against other pins, or against none (written before
// pinning), is fetched again at the pinned version.
func TestFetchChangedPinFetchesAgain(t *testing.T) {
	old := testPins
	old.Kernel.SHA256 = strings.Repeat("0", 64)
	for name, verified := range map[string][]Pin{"other pins": old.List(), "no pins": nil} {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			writeEntry(t, cache, verified)
			apt := &fakeApt{} // apt fails: the error shows it was asked
			_, err := (&fetcher{cacheDir: cache, pins: testPins, run: apt.run, log: hclog.NewNullLogger()}).fetch(context.Background())
			if err == nil || !errors.Is(err, ErrNoKernel) {
				t.Fatalf("fetch with apt failing: %v", err)
			}
			if len(apt.calls) == 0 || !strings.HasPrefix(apt.calls[0], "apt-get download ") || !strings.HasSuffix(apt.calls[0], " "+testPins.Kernel.String()) {
				t.Errorf("calls %q, want apt-get download %s first", apt.calls, testPins.Kernel)
			}
		})
	}
}

// A .deb whose sha256 is not the pinned one is refused and removed.
func TestDownloadChecksSHA256(t *testing.T) {
	dir := t.TempDir()
	pin := testPins.Busybox // fakeApt serves fakeDeb, whose sum is not this pin's
	apt := &fakeApt{download: map[string][]byte{pin.String(): fakeDeb}}
	f := &fetcher{cacheDir: dir, pins: testPins, run: apt.run, log: hclog.NewNullLogger()}
	_, err := f.download(context.Background(), dir, pin)
	if err == nil {
		t.Fatal("a .deb with the wrong sha256 was accepted")
	}
	deb := "busybox-static_1%3a1.0-1_amd64.deb"
	for _, want := range []string{deb, "sha256 " + sha256Hex256(fakeDeb), "want " + pin.SHA256, PinsFile, "removed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, serr := os.Stat(filepath.Join(dir, deb)); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("the refused .deb is still there: %v", serr)
	}

	apt.download[testPins.Kernel.String()] = fakeDeb
	got, err := f.download(context.Background(), dir, testPins.Kernel)
	if err != nil {
		t.Fatalf("the .deb of the right sha256: %v", err)
	}
	if filepath.Base(got) != "linux-image-9.9.9-1-cloud-amd64_9.9.9-1_amd64.deb" {
		t.Errorf("downloaded %s", got)
	}
}

// When the archive no longer offers the pinned version, the error says so
// and names what it offers and where the pin is.
func TestDownloadPinNotOffered(t *testing.T) {
	pin := testPins.Kernel
	apt := &fakeApt{
		madison: map[string]string{
			pin.Package:                        pin.Package + " | 9.9.9-2 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n",
			"linux-image-9.9.10-1-cloud-amd64": "linux-image-9.9.10-1-cloud-amd64 | 9.9.10-1 | http://deb.debian.org/debian bookworm/main amd64 Packages\n",
		},
		depends: KernelMetapackage + "\n  Depends: linux-image-9.9.10-1-cloud-amd64\n",
	}
	f := &fetcher{cacheDir: t.TempDir(), pins: testPins, run: apt.run, log: hclog.NewNullLogger()}
	_, err := f.download(context.Background(), t.TempDir(), pin)
	if !errors.Is(err, ErrPinNotOffered) {
		t.Fatalf("error %v, want ErrPinNotOffered", err)
	}
	for _, want := range []string{pin.Package + " 9.9.9-2", "pinned 9.9.9-1", "now depends on linux-image-9.9.10-1-cloud-amd64 9.9.10-1", PinsFile} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	// Offered, yet the download failed (the network): not a pin problem.
	apt.madison[pin.Package] = pin.Package + " | " + pin.Version + " | http://deb.debian.org/debian bookworm/main amd64 Packages\n"
	if _, err := f.download(context.Background(), t.TempDir(), pin); err == nil || errors.Is(err, ErrPinNotOffered) {
		t.Errorf("download failure of an offered version: %v", err)
	}
}
