package main

// The files that watch flapjack (README.md "Watching flapjack"): etc/prometheus's alerting rules
// pass promtool with a firing and a quiet case per alert, and every metric the rules and
// etc/grafana's dashboard name is one flapjack exports.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/flapjackgo/flapjack/executive"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/oobetet"
	"github.com/flapjackgo/flapjack/gateways/pagerduty"
	"github.com/flapjackgo/flapjack/notifier"
	"github.com/flapjackgo/flapjack/receiver"
	"github.com/flapjackgo/flapjack/staleness"
	"github.com/flapjackgo/flapjack/status"
)

const (
	rulesFile     = "etc/prometheus/flapjack.rules.yml"
	rulesTestFile = "etc/prometheus/flapjack.rules.test.yml"
	dashboardFile = "etc/grafana/flapjack.json"
)

// describedNames records the name of every metric a collector registered on it describes: the
// metrics exist whether or not they have a sample yet (a vector without children gathers nothing).
type describedNames map[string]bool

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (d describedNames) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for desc := range ch {
		if m := fqName.FindStringSubmatch(desc.String()); m != nil {
			d[m[1]] = true
		}
	}
	return nil
}

func (d describedNames) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = d.Register(c)
	}
}

func (d describedNames) Unregister(prometheus.Collector) bool { return false }

// exportedMetrics are the names of every metric a flapjack process exports: the registry every
// process starts with (Go, process, build info) and each stage's metrics, made the way
// runStages makes them.
func exportedMetrics(t *testing.T) describedNames {
	t.Helper()
	names := describedNames{}
	families, err := newRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		names[f.GetName()] = true
	}
	executive.NewMetrics(names)
	staleness.NewMetrics(names)
	notifier.NewMetrics(names)
	gateways.NewMetrics(names)
	oobetet.NewMetrics(names)
	pagerduty.NewMetrics(names)
	receiver.NewNagiosStats(names)
	receiver.NewNSCAStats(names)
	names.MustRegister(&status.Collector{})
	return names
}

// exports says whether name is an exported metric or a histogram's series of one.
func (d describedNames) exports(name string) bool {
	if d[name] {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && d[base] {
			return true
		}
	}
	return false
}

var (
	promqlString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promqlNumber   = regexp.MustCompile(`\b[0-9][0-9a-zA-Z_.]*`) // numbers and durations (5m)
	promqlGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlWord     = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	promqlKeywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}
)

// promqlMetrics are the metric names an expression selects: its words that are not functions
// (followed by a parenthesis), keywords, label names or values, durations or grouping labels.
func promqlMetrics(expr string) []string {
	expr = promqlString.ReplaceAllString(expr, `""`)
	expr = promqlMatchers.ReplaceAllString(expr, "")
	expr = promqlGrouping.ReplaceAllString(expr, "")
	expr = promqlNumber.ReplaceAllString(expr, "")
	var out []string
	for _, m := range promqlWord.FindAllStringSubmatch(expr, -1) {
		word := strings.TrimRight(m[0], " (\t\n")
		if m[1] != "" || slices.Contains(promqlKeywords, strings.ToLower(word)) || slices.Contains(out, word) {
			continue
		}
		out = append(out, word)
	}
	return out
}

func TestPromqlMetrics(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`sum by (medium) (increase(flapjack_gateway_deliveries_total{result=~"failed|invalid"}[15m])) > 0`, []string{"flapjack_gateway_deliveries_total"}},
		{`max(a{stage="executive"}) < 1 or absent(b{x="y, z"})`, []string{"a", "b"}},
		{`histogram_quantile(0.99, sum(rate(h_bucket{job=~"$job"}[$__rate_interval])) by (le))`, []string{"h_bucket"}},
		{`(sum(increase(x_total[15m])) or vector(0)) + on (job) group_left (version) y`, []string{"x_total", "y"}},
		{`rate(a[5m]) > 0 or rate(a[5m]) unless bool b offset 5m`, []string{"a", "b"}},
	}
	for _, c := range cases {
		if got := promqlMetrics(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("promqlMetrics(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Alert string `yaml:"alert"`
			Expr  string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// dashboardExprs are the dashboard's queries: every panel target's and the templating
// variables' (label_values(metric, label) keeps its metric).
func dashboardExprs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", path, p.Title)
		}
		for _, target := range p.Targets {
			out = append(out, target.Expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\(([^,]+),`)
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			m := labelValues.FindStringSubmatch(v.Definition)
			if m == nil {
				t.Fatalf("%s: templating query %q is not label_values(metric, label)", path, v.Definition)
			}
			out = append(out, m[1])
		}
	}
	return out
}

// TestMonitoringNamesExportedMetrics: each metric the rules and the dashboard select is one
// flapjack exports, and each dashboard query parses as PromQL (promtool, with Grafana's
// variables given values).
func TestMonitoringNamesExportedMetrics(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	exported := exportedMetrics(t)
	var rules ruleFile
	readYAML(t, filepath.Join(root, rulesFile), &rules)
	exprs := map[string][]string{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			exprs[rulesFile] = append(exprs[rulesFile], r.Expr)
		}
	}
	exprs[dashboardFile] = dashboardExprs(t, filepath.Join(root, dashboardFile))
	for file, list := range exprs {
		named := 0
		for _, e := range list {
			for _, m := range promqlMetrics(e) {
				named++
				if !exported.exports(m) {
					t.Errorf("%s names %s, which flapjack does not export (in %q)", file, m, e)
				}
			}
		}
		if named < len(list) {
			t.Errorf("%s: %d metrics found in %d expressions: the extraction is broken", file, named, len(list))
		}
	}
	checkPromQL(t, exprs[dashboardFile])
}

// checkPromQL parses the dashboard's queries with promtool, as recording rules.
func checkPromQL(t *testing.T, exprs []string) {
	t.Helper()
	vars := strings.NewReplacer("$__rate_interval", "5m", "$job", ".*")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range exprs {
		quoted, _ := json.Marshal(vars.Replace(e))
		fmt.Fprintf(&b, "      - record: dashboard:query%d\n        expr: %s\n", i, quoted)
	}
	path := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtoolPath(t), "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("the dashboard's queries do not parse: %v\n%s", err, out)
	}
}

func promtoolPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is needed (Debian package prometheus): apt-get install -y prometheus")
	}
	return p
}

// TestPrometheusRules: promtool accepts the rules, their test cases pass, and each alert has a
// case where it fires and one where it stays quiet.
func TestPrometheusRules(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	promtool := promtoolPath(t)
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", rulesTestFile}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	var rules ruleFile
	readYAML(t, filepath.Join(root, rulesFile), &rules)
	var cases struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	readYAML(t, filepath.Join(root, rulesTestFile), &cases)
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range cases.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			if !fires[r.Alert] || !quiet[r.Alert] {
				t.Errorf("%s: alert %s needs a case in %s where it fires (%v) and one where it does not (%v)", rulesFile, r.Alert, rulesTestFile, fires[r.Alert], quiet[r.Alert])
			}
		}
	}
	if alerts == 0 {
		t.Fatalf("%s has no alerts", rulesFile)
	}
}
