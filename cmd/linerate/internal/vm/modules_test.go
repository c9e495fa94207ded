package vm

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func fixtureDB(t *testing.T) *ModuleDB {
	t.Helper()
	db, err := LoadModuleDB("testdata/modules")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func names(mods []Module) []string { return ModuleNames(mods) }

// checkLoadOrder asserts that every module comes after all it depends on
// and that none is listed twice.
func checkLoadOrder(t *testing.T, db *ModuleDB, mods []Module) {
	t.Helper()
	pos := map[string]int{}
	for i, m := range mods {
		if _, dup := pos[m.Name]; dup {
			t.Errorf("%s listed twice in %v", m.Name, names(mods))
		}
		pos[m.Name] = i
	}
	for i, m := range mods {
		for _, d := range db.deps[m.Name] {
			if db.Builtin(d) {
				continue
			}
			if j, ok := pos[d]; !ok || j > i {
				t.Errorf("%s (position %d) needs %s, which is at %d of %v", m.Name, i, d, j, names(mods))
			}
		}
	}
}

func TestResolve(t *testing.T) {
	db := fixtureDB(t)
	for _, tc := range []struct {
		ask  []string
		want []string
	}{
		// The virtio NIC stack, in the load order verified on the real kernel.
		{[]string{"virtio_pci", "virtio_net"}, []string{"virtio_ring", "virtio_pci_modern_dev", "virtio_pci_legacy_dev",
			"virtio", "virtio_pci", "failover", "net_failover", "virtio_net"}},
		{[]string{"virtio_net"}, []string{"virtio_ring", "virtio", "failover", "net_failover", "virtio_net"}},
		{[]string{"veth", "pktgen", "sch_netem"}, []string{"veth", "pktgen", "sch_netem"}},
		// Each module once, however often asked for.
		{[]string{"virtio", "virtio_net", "virtio", "virtio_ring"}, []string{"virtio_ring", "virtio", "failover", "net_failover", "virtio_net"}},
		// Names with dashes and underscores are one module; built-ins are not loaded.
		{[]string{"hid_generic", "hid-generic"}, []string{"hid_generic"}},
		{[]string{"af_packet", "needs_builtin"}, []string{"needs_builtin"}},
		{[]string{"af-packet.ko"}, nil},
		{nil, nil},
	} {
		mods, err := db.Resolve(tc.ask...)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tc.ask, err)
			continue
		}
		if diff := cmp.Diff(tc.want, names(mods), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Resolve(%q) (-want +got):\n%s", tc.ask, diff)
		}
		checkLoadOrder(t, db, mods)
	}
}

func TestResolvePaths(t *testing.T) {
	db := fixtureDB(t)
	mods, err := db.Resolve("virtio_net", "hid-generic")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range mods {
		got[m.Name] = m.Path
	}
	for name, want := range map[string]string{
		"virtio_net":  filepath.Join("testdata", "modules", "kernel", "drivers", "net", "virtio_net.ko.xz"),
		"hid_generic": filepath.Join("testdata", "modules", "kernel", "drivers", "hid", "hid-generic.ko"),
		"failover":    filepath.Join("testdata", "modules", "kernel", "net", "core", "failover.ko"),
	} {
		if got[name] != want {
			t.Errorf("%s: path %q, want %q", name, got[name], want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	db := fixtureDB(t)
	for _, tc := range []struct {
		ask, want string
		is        error
	}{
		{"no_such_module", "module no_such_module: unknown kernel module: not in modules.dep of testdata/modules nor built in", ErrUnknownModule},
		{"needs_missing", "module missing (needed by needs_missing): unknown kernel module", ErrUnknownModule},
		{"cyc_a", "dependency cycle cyc_a -> cyc_b -> cyc_a", nil},
	} {
		_, err := db.Resolve("veth", tc.ask)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("Resolve(%s): %v, want an error containing %q", tc.ask, err, tc.want)
		}
	}
}

func TestParseModulesDepErrors(t *testing.T) {
	for in, want := range map[string]string{
		"kernel/a.ko kernel/b.ko\n":             `line 1: "kernel/a.ko kernel/b.ko": want "path.ko: dep.ko ..."`,
		"kernel/a.ko:\n\nkernel/x/a.ko.xz:\n":   "line 3: module a listed twice (kernel/a.ko and kernel/x/a.ko.xz)",
		": kernel/b.ko\n":                       "line 1",
		"kernel/a b.ko: x\n":                    "line 1",
		"# comment\n  \nkernel/ok.ko: dep.ko\n": "",
	} {
		_, err := ParseModulesDep(strings.NewReader(in))
		if want == "" {
			if err != nil {
				t.Errorf("ParseModulesDep(%q): %v", in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseModulesDep(%q): %v, want an error containing %q", in, err, want)
		}
	}
}

func FuzzParseModulesDep(f *testing.F) {
	seed, _ := os.ReadFile("testdata/modules/modules.dep")
	f.Add(string(seed))
	f.Add("a.ko: b.ko\nb.ko: a.ko\n")
	f.Add("a.ko.xz: b-c.ko\nb_c.ko:\n")
	f.Fuzz(func(t *testing.T, in string) {
		db, err := ParseModulesDep(strings.NewReader(in))
		if err != nil {
			return
		}
		for name := range db.paths {
			mods, err := db.Resolve(name)
			if err != nil {
				continue
			}
			if len(mods) == 0 || mods[len(mods)-1].Name != name {
				t.Fatalf("Resolve(%s) = %v: the module itself must come last", name, names(mods))
			}
			checkLoadOrder(t, db, mods)
		}
	})
}

// testModule is a minimal ELF64 relocatable object with a .modinfo
// section, like a .ko file as far as modinfoDepends is concerned.
func testModule(t *testing.T, modinfo string) []byte {
	t.Helper()
	shstr := "\x00.modinfo\x00.shstrtab\x00"
	const ehsize, shentsize = 64, 64
	infoOff := uint64(ehsize)
	strOff := infoOff + uint64(len(modinfo))
	shOff := (strOff + uint64(len(shstr)) + 7) &^ 7
	var b bytes.Buffer
	hdr := elf.Header64{
		Type: uint16(elf.ET_REL), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT),
		Shoff: shOff, Ehsize: ehsize, Shentsize: shentsize, Shnum: 3, Shstrndx: 2,
	}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	hdr.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	hdr.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(binary.Write(&b, binary.LittleEndian, hdr))
	b.WriteString(modinfo)
	b.WriteString(shstr)
	b.Write(make([]byte, int(shOff)-b.Len()))
	for _, s := range []elf.Section64{
		{},
		{Name: 1, Type: uint32(elf.SHT_PROGBITS), Flags: uint64(elf.SHF_ALLOC), Off: infoOff, Size: uint64(len(modinfo)), Addralign: 1},
		{Name: 10, Type: uint32(elf.SHT_STRTAB), Off: strOff, Size: uint64(len(shstr)), Addralign: 1},
	} {
		must(binary.Write(&b, binary.LittleEndian, s))
	}
	return b.Bytes()
}

func TestModinfoDepends(t *testing.T) {
	deps, err := modinfoDepends(testModule(t, "license=GPL\x00depends=virtio_ring,virtio,net-failover\x00name=virtio_net\x00"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"virtio_ring", "virtio", "net_failover"}, deps); diff != "" {
		t.Errorf("depends (-want +got):\n%s", diff)
	}
	if deps, err := modinfoDepends(testModule(t, "depends=\x00")); err != nil || len(deps) != 0 {
		t.Errorf("empty depends: %v, %v", deps, err)
	}
	if _, err := modinfoDepends([]byte("not an ELF file")); err == nil {
		t.Error("modinfoDepends accepted a non-ELF file")
	}
}

// TestGenerateModulesDep builds a modules tree the way Debian ships it
// (no modules.dep; some modules compressed) and checks the generated
// modules.dep line by line and through Resolve.
func TestGenerateModulesDep(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		w := gzip.NewWriter(&out)
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	write("kernel/drivers/virtio/virtio_ring.ko", testModule(t, "depends=\x00"))
	write("kernel/drivers/virtio/virtio.ko.gz", gz(testModule(t, "depends=virtio_ring\x00")))
	write("kernel/net/core/failover.ko", testModule(t, "depends=\x00"))
	write("kernel/drivers/net/net_failover.ko", testModule(t, "depends=failover\x00"))
	netModule := "kernel/drivers/net/virtio_net.ko"
	if _, err := exec.LookPath("xz"); err == nil {
		xz := exec.Command("xz", "-c", "--check=crc32")
		xz.Stdin = bytes.NewReader(testModule(t, "depends=virtio_ring,virtio,net_failover\x00"))
		out, err := xz.Output()
		if err != nil {
			t.Fatalf("xz: %v", err)
		}
		netModule += ".xz"
		write(netModule, out)
	} else {
		t.Log("xz not installed: the .ko.xz case is not covered")
		write(netModule, testModule(t, "depends=virtio_ring,virtio,net_failover\x00"))
	}
	write("kernel/misc/lonely.ko", testModule(t, "depends=not_shipped\x00"))
	write("modules.builtin", []byte("kernel/net/packet/af_packet.ko\n"))

	warns, err := GenerateModulesDep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"module lonely depends on not_shipped, which no module provides"}, warns); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	got, err := os.ReadFile(filepath.Join(dir, "modules.dep"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko",
		netModule + ": kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko kernel/drivers/virtio/virtio.ko.gz kernel/drivers/virtio/virtio_ring.ko",
		"kernel/drivers/virtio/virtio.ko.gz: kernel/drivers/virtio/virtio_ring.ko",
		"kernel/drivers/virtio/virtio_ring.ko:",
		"kernel/misc/lonely.ko:",
		"kernel/net/core/failover.ko:",
	}, "\n") + "\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("modules.dep (-want +got):\n%s", diff)
	}
	db, err := LoadModuleDB(dir)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := db.Resolve("virtio_net", "af_packet")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"virtio_ring", "virtio", "failover", "net_failover", "virtio_net"}, names(mods)); diff != "" {
		t.Errorf("resolve (-want +got):\n%s", diff)
	}
	for _, m := range mods {
		obj, err := ReadModule(m.Path)
		if err != nil {
			t.Fatalf("read %s: %v", m.Name, err)
		}
		if !bytes.HasPrefix(obj, []byte(elf.ELFMAG)) {
			t.Errorf("ReadModule(%s) is not an ELF object", m.Path)
		}
	}
}

func TestReadModuleErrors(t *testing.T) {
	if _, err := ReadModule("testdata/modules/modules.dep"); err == nil || !strings.Contains(err.Error(), "not a .ko") {
		t.Errorf("ReadModule of a non-module: %v", err)
	}
	if _, err := ReadModule(filepath.Join(t.TempDir(), "missing.ko")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadModule of a missing file: %v", err)
	}
}
