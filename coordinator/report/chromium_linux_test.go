//go:build linux

package report_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
)

// chromiumPath finds Debian's chromium, or skips (fails in CI, where
// `make report-deps` installs it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("headless chromium is skipped in -short mode")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found (CI=true, where `make report-deps` should have installed it: apt-get install chromium)")
	}
	t.Skip("chromium not found: `make report-deps` as root (apt-get install chromium) runs this test")
	return ""
}

// runChromium runs headless chromium with a private profile and home,
// bounded by a timeout; on return nothing it started is left running
// (its whole process group is killed).
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	home := t.TempDir()
	base := []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(home, "profile"),
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
		"--disable-sync", "--hide-scrollbars", "--mute-audio", "--disable-dev-shm-usage"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // helpers it left behind
	}
	if ctx.Err() != nil {
		t.Fatalf("chromium %s: timed out after 90 s\n%s", strings.Join(args, " "), tail(stderr.String()))
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, tail(stderr.String()))
	}
	return stdout.Bytes()
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// TestReportHeadlessChromium renders the HTML report in Debian's
// chromium: the dumped DOM holds every expected series, and the
// screenshot is not blank — it has many colours and the throughput and
// line-rate series' colours.
func TestReportHeadlessChromium(t *testing.T) {
	bin := chromiumPath(t)
	for name, doc := range map[string]*results.Document{"campaign": resultstest.Campaign(), "run": resultstest.Run()} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			page := filepath.Join(dir, "report.html")
			var buf bytes.Buffer
			if err := report.HTML(&buf, doc); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			url := "file://" + page

			dom := string(runChromium(t, bin, "--dump-dom", url))
			want := []string{`data-series="throughput-mpps"`, `data-series="line-rate-mpps"`, `data-series="throughput-pct"`, `data-series="line-rate-pct"`}
			for _, s := range doc.Rows() {
				key := s.Key()
				want = append(want, `data-series="loss-`+key+`"`, `<circle class="point" `)
			}
			for _, w := range want {
				if !strings.Contains(dom, w) {
					t.Errorf("chromium's DOM lacks %s", w)
				}
			}
			for _, s := range doc.Rows() {
				if n := strings.Count(dom, `data-size="`+s.Key()+`"`); n < 5 {
					t.Errorf("chromium's DOM has %d elements for size %s, want its points in every chart", n, s.Key())
				}
			}

			shot := filepath.Join(dir, "shot.png")
			runChromium(t, bin, "--screenshot="+shot, "--window-size=1280,2000", url)
			f, err := os.Open(shot)
			if err != nil {
				t.Fatalf("no screenshot: %v", err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatalf("screenshot is not a PNG: %v", err)
			}
			checkDrawn(t, img)
		})
	}
}

// checkDrawn fails on a blank screenshot: it wants many colours, a fair
// share of non-white pixels, and the throughput series' blue and the
// line-rate series' gold in the charts.
func checkDrawn(t *testing.T, img image.Image) {
	t.Helper()
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dy() < 1000 {
		t.Fatalf("screenshot is %dx%d, want 1280x2000", b.Dx(), b.Dy())
	}
	colours := map[[3]uint8]int{}
	nonWhite := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}
			colours[c]++
			if c != [3]uint8{255, 255, 255} {
				nonWhite++
			}
		}
	}
	near := func(want [3]uint8) int {
		n := 0
		for c, count := range colours {
			d := 0
			for i := range c {
				d = max(d, abs(int(c[i])-int(want[i])))
			}
			if d <= 12 {
				n += count
			}
		}
		return n
	}
	share := float64(nonWhite) / float64(b.Dx()*b.Dy())
	blue := near([3]uint8{0x1f, 0x77, 0xb4})
	gold := near([3]uint8{0xb8, 0x86, 0x0b})
	t.Logf("screenshot %dx%d: %d colours, %.1f%% non-white, %d throughput-blue and %d line-rate-gold pixels", b.Dx(), b.Dy(), len(colours), 100*share, blue, gold)
	if len(colours) < 50 || share < 0.02 {
		t.Errorf("screenshot looks blank: %d colours, %.2f%% non-white", len(colours), 100*share)
	}
	if blue < 100 {
		t.Errorf("screenshot has %d pixels of the throughput series' colour: the charts did not draw", blue)
	}
	if gold < 20 {
		t.Errorf("screenshot has %d pixels of the line-rate series' colour", gold)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
