//go:build linux

package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
	"github.com/linerate/linerate/latency"
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

			checkDrawn(t, screenshot(t, bin, url, "--window-size=1280,2000"))
		})
	}
}

// screenshot is chromium's screenshot of url, taken with args.
func screenshot(t *testing.T, bin, url string, args ...string) image.Image {
	t.Helper()
	shot := filepath.Join(t.TempDir(), "shot.png")
	runChromium(t, bin, append(args, "--screenshot="+shot, url)...)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	return img
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

// probeScript, added to a copy of the report (which has no script of its
// own), measures in the browser every latency chart as laid out: its box
// on the page, each series' polyline points and markers and whether they
// are drawn inside the chart, and whether each legend entry, note and
// axis title has a visible extent; with any script error, as JSON in
// <pre id="probe">.
const probeScript = `<script>
(function () {
  var errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message)); });
  window.addEventListener('load', function () {
    var out = {errors: errors, charts: []};
    try {
      document.querySelectorAll('svg.chart[id^="chart-latency-"]').forEach(function (svg) {
        var r = svg.getBoundingClientRect();
        var inside = function (el) {
          var b = el.getBoundingClientRect();
          return (b.width > 0 || b.height > 0) && b.left >= r.left - 1 && b.right <= r.right + 1 && b.top >= r.top - 1 && b.bottom <= r.bottom + 1;
        };
        var c = {id: svg.id, x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height, series: [], labels: []};
        svg.querySelectorAll('g.series').forEach(function (g) {
          var pl = g.querySelector('polyline');
          var s = {name: g.getAttribute('data-series'), points: pl ? pl.points.numberOfItems : 0, line: pl ? inside(pl) : false, markers: 0, drawn: 0};
          g.querySelectorAll('circle.point').forEach(function (p) {
            s.markers++;
            if (inside(p) && getComputedStyle(p).visibility === 'visible') { s.drawn++; }
          });
          c.series.push(s);
        });
        svg.querySelectorAll('g.legend text, text.note, text.axis-title').forEach(function (t) {
          var st = getComputedStyle(t);
          c.labels.push({text: t.textContent, visible: inside(t) && t.getComputedTextLength() > 0 && st.visibility === 'visible' && st.display !== 'none' && parseFloat(st.fontSize) >= 9});
        });
        out.charts.push(c);
      });
    } catch (e) { errors.push(String(e)); }
    var pre = document.createElement('pre');
    pre.id = 'probe';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  });
})();
</script>`

// probed is what probeScript measured.
type probed struct {
	Errors []string
	Charts []probedChart
}

// probedChart is one chart as laid out: its box on the page (px).
type probedChart struct {
	ID         string
	X, Y, W, H float64
	Series     []probedSeries
	Labels     []struct {
		Text    string
		Visible bool
	}
}

// probedSeries is one series: its polyline's points and whether it lies
// inside the chart, its markers and how many are drawn inside it.
type probedSeries struct {
	Name                   string
	Points, Markers, Drawn int
	Line                   bool
}

// wantChart is a latency chart the document must have: its series (name,
// markers, polyline points; 0: not checked) and legend labels.
type wantChart struct {
	id     string
	series []wantSeries
	labels []string
	colour [3]uint8 // a series colour that must show inside its box
}

type wantSeries struct {
	name            string
	markers, points int
}

// latencyChartsOf is what the document's latency charts must be: for a
// campaign per size a load chart of its search trials that timed packets
// (min, p50, p99, max, a marker per trial) and a CDF chart of the flows
// of its latency trials, else of its throughput trial; for a run a CDF
// chart of its flows. A CDF curve has a p50 and a p99 marker and two
// polyline points per histogram step.
func latencyChartsOf(doc *results.Document) []wantChart {
	cdf := func(id string, flows map[string]*latency.Latency) wantChart {
		w := wantChart{id: id, labels: []string{"packets at or below (%)"}, colour: [3]uint8{0x1f, 0x77, 0xb4}}
		var keys []string
		for k := range flows {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			w.series = append(w.series, wantSeries{"cdf-" + k, 2, 2 * len(flows[k].CDF())})
			w.labels = append(w.labels, strings.Replace(k, "-", " → ", 1))
		}
		return w
	}
	if doc.Kind == results.KindRun {
		return []wantChart{cdf("chart-latency-cdf", flowLatency([]results.Trial{{Flows: doc.Run.Flows}}))}
	}
	var out []wantChart
	for _, s := range doc.Summary {
		key := strconv.Itoa(s.Size)
		n := 0
		var lat []results.Trial
		for _, tr := range doc.Trials {
			switch {
			case tr.Size != s.Size:
			case tr.Phase == campaign.PhaseLatency:
				lat = append(lat, tr)
			case tr.Latency() != nil:
				n++
			}
		}
		load := wantChart{id: "chart-latency-load-" + key, labels: []string{"offered load per flow (% of line rate)"}, colour: [3]uint8{0x94, 0x67, 0xbd}}
		for _, p := range []string{"min", "p50", "p99", "max"} {
			load.series = append(load.series, wantSeries{name: "latency-" + p, markers: n})
			load.labels = append(load.labels, p)
		}
		out = append(out, load)
		if len(lat) == 0 {
			lat = []results.Trial{*doc.ThroughputTrialOf(s)}
		}
		out = append(out, cdf("chart-latency-cdf-"+key, flowLatency(lat)))
	}
	return out
}

// TestReportLatencyChartsHeadlessChromium renders the latency charts of a
// campaign with RFC 2544's latency test, one without, and a run in
// Debian's chromium and measures them there (probeScript): every chart
// the document calls for is laid out, with its series, their markers and
// polyline points as many as the data has, drawn inside the chart; every
// legend entry, axis title and note visible, one of them the clock; no
// script error. The screenshot shows each chart's series colour inside
// the chart's box.
func TestReportLatencyChartsHeadlessChromium(t *testing.T) {
	bin := chromiumPath(t)
	for name, doc := range map[string]*results.Document{"latency-campaign": resultstest.CampaignWithLatencyTest(), "campaign": resultstest.Campaign(), "run": resultstest.Run()} {
		t.Run(name, func(t *testing.T) {
			want := latencyChartsOf(doc)
			dir := t.TempDir()
			page := filepath.Join(dir, "report.html")
			var buf bytes.Buffer
			if err := report.HTML(&buf, doc); err != nil {
				t.Fatal(err)
			}
			probedPage := strings.Replace(buf.String(), "</body>", probeScript+"\n</body>", 1)
			if err := os.WriteFile(page, []byte(probedPage), 0o644); err != nil {
				t.Fatal(err)
			}
			url := "file://" + page
			size := []string{"--window-size=1280,4400", "--force-device-scale-factor=1"}

			dom, err := html.Parse(bytes.NewReader(runChromium(t, bin, append(size, "--dump-dom", url)...)))
			if err != nil {
				t.Fatal(err)
			}
			pre := find(dom, "pre", map[string]string{"id": "probe"})
			if len(pre) != 1 {
				t.Fatal("the probe did not run in chromium")
			}
			var got probed
			if err := json.Unmarshal([]byte(text(pre[0])), &got); err != nil {
				t.Fatalf("probe: %v\n%s", err, text(pre[0]))
			}
			if len(got.Errors) > 0 {
				t.Errorf("script errors: %q", got.Errors)
			}
			if len(got.Charts) != len(want) {
				t.Errorf("chromium laid out %d latency charts, want %d", len(got.Charts), len(want))
			}

			img := screenshot(t, bin, url, size...)

			for _, w := range want {
				i := slices.IndexFunc(got.Charts, func(c probedChart) bool { return c.ID == w.id })
				if i < 0 {
					t.Errorf("%s: not in chromium's page", w.id)
					continue
				}
				c := got.Charts[i]
				if c.W < 300 || c.H < 200 {
					t.Errorf("%s: laid out %.0fx%.0f px", w.id, c.W, c.H)
				}
				if len(c.Series) != len(w.series) {
					t.Errorf("%s: %d series, want %d", w.id, len(c.Series), len(w.series))
				}
				for _, ws := range w.series {
					j := slices.IndexFunc(c.Series, func(s probedSeries) bool { return s.Name == ws.name })
					if j < 0 {
						t.Errorf("%s: no series %s", w.id, ws.name)
						continue
					}
					s := c.Series[j]
					if s.Markers != ws.markers || s.Drawn != ws.markers {
						t.Errorf("%s %s: %d markers, %d drawn inside the chart, want %d", w.id, ws.name, s.Markers, s.Drawn, ws.markers)
					}
					if ws.points > 0 && (s.Points != ws.points || !s.Line) {
						t.Errorf("%s %s: a polyline of %d points (drawn inside: %v), want %d", w.id, ws.name, s.Points, s.Line, ws.points)
					}
				}
				visible := map[string]bool{}
				clock, delay := false, false
				for _, l := range c.Labels {
					if !l.Visible {
						t.Errorf("%s: label %q not visible", w.id, l.Text)
					}
					visible[l.Text] = l.Visible
					clock = clock || (l.Visible && strings.Contains(l.Text, "clock"))
					delay = delay || (l.Visible && strings.HasPrefix(l.Text, "one-way delay (µs"))
				}
				for _, l := range w.labels {
					if !visible[l] {
						t.Errorf("%s: no visible label %q", w.id, l)
					}
				}
				if !clock || !delay {
					t.Errorf("%s: the clock (%v) or the delay axis's title (%v) not visible", w.id, clock, delay)
				}
				box := image.Rect(int(c.X), int(c.Y), int(c.X+c.W), int(c.Y+c.H))
				if !box.In(img.Bounds()) {
					t.Errorf("%s at %v: outside the screenshot %v", w.id, box, img.Bounds())
					continue
				}
				n := nearIn(img, box, w.colour)
				t.Logf("%s: %.0fx%.0f px at y %.0f, %d series, %d labels, %d pixels of %x", w.id, c.W, c.H, c.Y, len(c.Series), len(c.Labels), n, w.colour)
				if n < 30 {
					t.Errorf("%s: %d pixels of its series' colour %x inside its box: not drawn", w.id, n, w.colour)
				}
			}
		})
	}
}

// nearIn counts the pixels of img inside box within 12 of colour on
// every channel.
func nearIn(img image.Image, box image.Rectangle, colour [3]uint8) int {
	n := 0
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			c := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
			d := 0
			for i := range c {
				d = max(d, abs(int(c[i])-int(colour[i])))
			}
			if d <= 12 {
				n++
			}
		}
	}
	return n
}
