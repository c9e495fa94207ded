package topology

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linerate/linerate/internal/safefile"
)

// Recorder is a Root that remembers every file, directory and symlink
// read through it, so that exactly what topology read can be written out
// as a snapshot and replayed elsewhere with --root. Writes are refused.
type Recorder struct {
	base Root

	mu    sync.Mutex
	files map[string]snapFile // real (resolved) path → content
	dirs  map[string]bool
	links map[string]string
	seen  map[string]bool // paths whose symlinks were walked
}

type snapFile struct {
	data []byte
	mode fs.FileMode
}

// NewRecorder wraps base.
func NewRecorder(base Root) *Recorder {
	return &Recorder{base: base, files: map[string]snapFile{}, dirs: map[string]bool{}, links: map[string]string{}, seen: map[string]bool{}}
}

// walk records the symlinks on the way to name and returns its real path.
func (rc *Recorder) walk(name string) string {
	name = path.Clean("/" + name)
	rc.mu.Lock()
	done := rc.seen[name]
	rc.seen[name] = true
	rc.mu.Unlock()
	parts := strings.Split(strings.TrimPrefix(name, "/"), "/")
	cur := "/"
	for i, p := range parts {
		if p == "" {
			continue
		}
		next := path.Join(cur, p)
		if !done {
			if info, err := rc.base.Lstat(next); err == nil && info.Mode()&fs.ModeSymlink != 0 {
				if t, err := rc.base.Readlink(next); err == nil {
					rc.mu.Lock()
					rc.links[next] = t
					rc.mu.Unlock()
					// The target's own links too (/proc/net -> self/net
					// goes through /proc/self), or the replay stops there.
					if !path.IsAbs(t) {
						t = path.Join(cur, t)
					}
					rc.walk(t)
				}
			}
		}
		real, err := realpath(rc.base, next)
		if err != nil {
			return path.Join(append([]string{cur}, parts[i:]...)...)
		}
		cur = real
	}
	return cur
}

func (rc *Recorder) addFile(name string, data []byte) {
	mode := fs.FileMode(0o644)
	if info, err := rc.base.Stat(name); err == nil {
		mode = info.Mode().Perm()
	}
	real := rc.walk(name)
	rc.mu.Lock()
	rc.files[real] = snapFile{data: append([]byte(nil), data...), mode: mode}
	rc.mu.Unlock()
}

// ReadFile implements Root.
func (rc *Recorder) ReadFile(name string) ([]byte, error) {
	b, err := rc.base.ReadFile(name)
	if err == nil {
		rc.addFile(name, b)
	}
	return b, err
}

// ReadDir implements Root; children not otherwise read are kept as empty
// files, directories or links so that the listing replays.
func (rc *Recorder) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := rc.base.ReadDir(name)
	if err != nil {
		return ents, err
	}
	real := rc.walk(name)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.dirs[real] = true
	for _, e := range ents {
		child := path.Join(real, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			if t, err := rc.base.Readlink(child); err == nil {
				rc.links[child] = t
			}
		case e.IsDir():
			rc.dirs[child] = true
		default:
			if _, ok := rc.files[child]; !ok {
				// Small attribute files (msi_irqs/N says "msix") are kept
				// as they are; unreadable ones as empty placeholders.
				f := snapFile{mode: 0o644}
				if info, err := rc.base.Stat(child); err == nil {
					f.mode = info.Mode().Perm()
				}
				if b, err := rc.base.ReadFile(child); err == nil && len(b) <= 4096 {
					f.data = b
				}
				rc.files[child] = f
			}
		}
	}
	return ents, nil
}

// Lstat implements Root.
func (rc *Recorder) Lstat(name string) (fs.FileInfo, error) {
	info, err := rc.base.Lstat(name)
	if err == nil {
		rc.note(name, info)
	}
	return info, err
}

// Stat implements Root.
func (rc *Recorder) Stat(name string) (fs.FileInfo, error) {
	info, err := rc.base.Stat(name)
	if err == nil {
		rc.note(name, info)
	}
	return info, err
}

func (rc *Recorder) note(name string, info fs.FileInfo) {
	real := rc.walk(name)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if info.IsDir() {
		rc.dirs[real] = true
	} else if info.Mode().IsRegular() {
		if f, ok := rc.files[real]; ok {
			f.mode = info.Mode().Perm()
			rc.files[real] = f
		} else {
			rc.files[real] = snapFile{mode: info.Mode().Perm()}
		}
	}
}

// Readlink implements Root.
func (rc *Recorder) Readlink(name string) (string, error) {
	t, err := rc.base.Readlink(name)
	if err == nil {
		rc.walk(path.Dir(name))
		rc.mu.Lock()
		rc.links[path.Clean("/"+name)] = t
		rc.mu.Unlock()
	}
	return t, err
}

// WriteFile is refused: a snapshot never changes the host.
func (rc *Recorder) WriteFile(name string, _ []byte) error {
	return fmt.Errorf("write %s: snapshot root is read-only", name)
}

// WriteTarGz writes what was recorded as a gzipped tar with relative
// paths, symlinks kept as symlinks.
func (rc *Recorder) WriteTarGz(w io.Writer) error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	mtime := time.Now().UTC().Truncate(time.Second)
	dirs := map[string]bool{}
	addParents := func(p string) {
		for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for p := range rc.dirs {
		dirs[p] = true
		addParents(p)
	}
	for p := range rc.files {
		addParents(p)
	}
	for p := range rc.links {
		addParents(p)
	}
	type item struct {
		name string
		hdr  *tar.Header
		data []byte
	}
	var items []item
	for d := range dirs {
		if d == "/" {
			continue
		}
		items = append(items, item{d, &tar.Header{Typeflag: tar.TypeDir, Mode: 0o755}, nil})
	}
	for p, f := range rc.files {
		if _, isLink := rc.links[p]; isLink {
			continue
		}
		items = append(items, item{p, &tar.Header{Typeflag: tar.TypeReg, Mode: int64(f.mode), Size: int64(len(f.data))}, f.data})
	}
	for p, t := range rc.links {
		items = append(items, item{p, &tar.Header{Typeflag: tar.TypeSymlink, Linkname: t, Mode: 0o777}, nil})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].name < items[j].name })
	for _, it := range items {
		it.hdr.Name = strings.TrimPrefix(it.name, "/")
		if it.hdr.Typeflag == tar.TypeDir {
			it.hdr.Name += "/"
		}
		it.hdr.ModTime = mtime
		if err := tw.WriteHeader(it.hdr); err != nil {
			return fmt.Errorf("write snapshot entry %s: %w", it.name, err)
		}
		if _, err := tw.Write(it.data); err != nil {
			return fmt.Errorf("write snapshot entry %s: %w", it.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// OpenSnapshot unpacks the snapshot archive at path (from WriteTarGz)
// into a temporary directory and opens that as a host root; Close removes
// the directory. An archive that cannot be opened is an error matching
// ErrNoSnapshot.
func OpenSnapshot(path string) (*DirRoot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &sentinelError{sentinel: ErrNoSnapshot, err: err}
	}
	defer f.Close()
	tmp, err := os.MkdirTemp("", "linerate-root-")
	if err != nil {
		return nil, fmt.Errorf("unpack snapshot: %w", err)
	}
	if err := ExtractTarGz(f, tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	r, err := OpenRoot(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	r.tmp = tmp
	return r, nil
}

// SaveTarGz writes what was recorded to the file path (WriteTarGz's
// archive) atomically, so path never holds half a snapshot, and only over
// a regular file (safefile.WriteFile): a device or a directory is refused.
func (rc *Recorder) SaveTarGz(path string) error {
	var b bytes.Buffer
	if err := rc.WriteTarGz(&b); err != nil {
		return err
	}
	if err := safefile.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	return nil
}

// ExtractTarGz unpacks a snapshot into dir. It refuses absolute paths and
// "..", so a snapshot cannot write outside dir.
func ExtractTarGz(r io.Reader, dir string) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("read snapshot: %w", err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read snapshot: %w", err)
		}
		name := path.Clean(h.Name)
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("read snapshot: entry %q escapes the root", h.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(dst, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, dst)
		case tar.TypeReg:
			var f *os.File
			if f, err = os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644); err == nil {
				_, err = io.Copy(f, io.LimitReader(tr, 64<<20))
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err == nil {
					err = os.Chmod(dst, fs.FileMode(h.Mode).Perm())
				}
			}
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("extract snapshot entry %s: %w", h.Name, err)
		}
	}
}

// TimeDaemons are the processes that discipline the clock, by comm
// (systemd-timesyncd's comm is cut to 15 bytes): what a snapshot keeps of
// /proc and doctor's clock check looks for.
var TimeDaemons = []string{"chronyd", "ntpd", "ptp4l", "phc2sys", "systemd-timesyn"}

// PktgenModules are the names kernel pktgen's module is installed under,
// in /lib/modules/REL/kernel/net/core.
var PktgenModules = []string{"pktgen.ko", "pktgen.ko.xz", "pktgen.ko.zst", "pktgen.ko.gz"}

// recordHostFiles reads through rec the files doctor's file checks read
// beyond what Inspect does, so that `linerate doctor --root` on the
// snapshot judges as on the host: the interface's MTU and its queues'
// RPS, RFS and XPS settings; each online CPU's cpufreq governor and
// driver and cpuidle states; the NUMA nodes; /proc/stat and /proc/cpuinfo;
// the kernel release, its configuration and where pktgen is; conntrack's
// count and module and iptables-legacy's tables; and of the processes only
// those of irqbalance (comm, cmdline, environ) and of the
// time daemons (comm). Files that are absent are absent in the snapshot
// too. Whole /proc is never listed through rec: its listing would read
// every small file of it.
func recordHostFiles(base Root, rec *Recorder, n *NIC) {
	read := func(name string) { _, _ = rec.ReadFile(name) }
	stat := func(name string) { _, _ = rec.Stat(name) }
	netdir := "/sys/class/net/" + n.Iface
	read(netdir + "/mtu")
	if ents, err := base.ReadDir(netdir + "/queues"); err == nil {
		for _, e := range ents {
			for _, attr := range []string{"rps_cpus", "rps_flow_cnt", "xps_cpus", "xps_rxqs"} {
				read(netdir + "/queues/" + e.Name() + "/" + attr)
			}
		}
	}
	read("/proc/sys/net/core/rps_sock_flow_entries")
	for _, c := range n.OnlineCPUs.CPUs() {
		cpu := fmt.Sprintf("%s/cpu%d", cpuDir, c)
		stat(cpu + "/cpufreq")
		read(cpu + "/cpufreq/scaling_governor")
		read(cpu + "/cpufreq/scaling_driver")
		states, err := rec.ReadDir(cpu + "/cpuidle")
		if err != nil {
			continue
		}
		for _, s := range states {
			for _, attr := range []string{"name", "latency", "disable"} {
				read(cpu + "/cpuidle/" + s.Name() + "/" + attr)
			}
		}
	}
	_, _ = rec.ReadDir("/sys/devices/system/node")
	read("/proc/stat")
	read("/proc/cpuinfo")
	rel, err := readString(rec, "/proc/sys/kernel/osrelease")
	if err == nil {
		stat("/proc/net/pktgen")
		for _, m := range PktgenModules {
			stat("/lib/modules/" + rel + "/kernel/net/core/" + m)
		}
		if _, err := rec.ReadFile("/boot/config-" + rel); err != nil {
			read("/proc/config.gz")
		}
	}
	// Conntrack: its count, its module and iptables-legacy's table lists.
	read("/proc/sys/net/netfilter/nf_conntrack_count")
	stat("/sys/module/nf_conntrack")
	read("/proc/net/ip_tables_names")
	read("/proc/net/ip6_tables_names")
	// A /proc that cannot be listed captures no process.
	procs, _ := ProcessesNamed(base, append([]string{"irqbalance"}, TimeDaemons...)...)
	for _, p := range procs {
		dir := "/proc/" + strconv.Itoa(p.PID) + "/"
		read(dir + "comm")
		if p.Comm == "irqbalance" {
			read(dir + "cmdline")
			read(dir + "environ")
		}
	}
}
