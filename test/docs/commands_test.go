package docs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// plugin is the path of kubectl-apimsync, built once by TestMain.
var plugin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apimsync-docs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	plugin = filepath.Join(dir, "kubectl-apimsync")
	if out, err := exec.Command("go", "build", "-o", plugin, "../../cmd/kubectl-apimsync").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./cmd/kubectl-apimsync: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// docCommands are the kubectl commands of every documentation file.
func docCommands(t *testing.T) []Command {
	t.Helper()
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	var all []Command
	for _, f := range files {
		cmds, err := Commands(root, f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, cmds...)
	}
	return all
}

// TestNoKubectlFlagBeforeThePluginName: `kubectl -n team-a apimsync export` fails (kubectl looks for a
// plugin only when its name comes first); the documentation writes `kubectl apimsync export -n team-a`.
func TestNoKubectlFlagBeforeThePluginName(t *testing.T) {
	for _, c := range docCommands(t) {
		if c.FlagsBeforePlugin() {
			t.Errorf("%s: kubectl refuses flags before a plugin's name: write kubectl apimsync <command> <flags>", c)
		}
	}
}

// TestPluginCommandsOfTheDocsParse runs every `kubectl apimsync ...` of the documentation with the
// plugin, with no cluster and no 3scale: each must get past the plugin's flag and argument checks, to
// where it would read a cluster, a tenant or a local file. Code spans that only name a command
// (`kubectl apimsync convert` in a sentence) run as `<command> --help`.
func TestPluginCommandsOfTheDocsParse(t *testing.T) {
	found := 0
	for _, c := range docCommands(t) {
		args, ok := c.Plugin()
		if !ok {
			continue
		}
		found++
		if c.Inline && len(args) <= 1 {
			args = append(args, "--help")
		}
		if err := runPlugin(t, args); err != nil {
			t.Errorf("%s: %v", c, err)
		} else {
			t.Logf("%s: parses", c)
		}
	}
	// The plugin's page alone has more than ten; none found means the extraction broke.
	if found < 10 {
		t.Errorf("found %d kubectl apimsync commands in the documentation, want at least 10", found)
	}
}

// TestRunPluginRefusesUsageErrors: the check above fails on a command the plugin refuses, and passes
// one it takes (a test that cannot fail would prove nothing).
func TestRunPluginRefusesUsageErrors(t *testing.T) {
	cases := map[string]struct {
		args []string
		ok   bool
	}{
		"status of a namespace":         {args: []string{"status", "-n", "team-a"}, ok: true},
		"export from an admin URL":      {args: []string{"export", "--all", "--admin-url", "https://acme-admin.3scale.net", "--out", "./acme"}, ok: true},
		"convert of a directory":        {args: []string{"convert", "-f", "gitops/3scale-operator", "--out", "gitops/apimsync"}, ok: true},
		"diff of a kustomization":       {args: []string{"diff", "-n", "team-a", "-k", "gitops/team-a"}, ok: true},
		"help":                          {args: []string{"--help"}, ok: true},
		"unknown flag":                  {args: []string{"export", "--all", "--out", "./acme", "--tenant", "acme"}},
		"flag of another command":       {args: []string{"status", "--out", "./acme"}},
		"misspelt command":              {args: []string{"exprot", "--all", "--out", "./acme"}},
		"argument where none is taken":  {args: []string{"diff", "team-a", "-k", "gitops/team-a"}},
		"required flag missing":         {args: []string{"convert", "-f", "gitops/3scale-operator"}},
		"export of nothing named":       {args: []string{"export", "--out", "./acme"}},
		"bad value of a flag":           {args: []string{"status", "--watch", "--interval", "soon"}},
		"convert with two inputs":       {args: []string{"convert", "-f", "a.yaml", "--from-cluster", "--out", "x"}},
		"a credentials mode that isn't": {args: []string{"export", "--all", "--credentials", "plain", "--out", "x"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := runPlugin(t, tc.args)
			if got := err == nil; got != tc.ok {
				t.Errorf("kubectl apimsync %s: accepted %v (%v), want %v", strings.Join(tc.args, " "), got, err, tc.ok)
			}
		})
	}
}

// TestFlagsBeforePlugin: kubectl's flags before the plugin's name are found, before its own commands
// they are not.
func TestFlagsBeforePlugin(t *testing.T) {
	cases := map[string]bool{
		"kubectl -n team-a apimsync export --all --out gitops/team-a":        true,
		"kubectl --context=prod apimsync status":                             true,
		"kubectl --namespace team-a --context prod apimsync status":          true,
		"kubectl apimsync export -n team-a --all --out gitops/team-a":        false,
		"kubectl -n team-a get apimsync":                                     false,
		"kubectl annotate apimsync --all -n team-a apimsync.io/sync-now=1":   false,
		"kubectl -n team-a apply -k gitops/team-a":                           false,
		"THREESCALE_TOKEN=... kubectl -n team-a apimsync export --all # why": true,
	}
	for line, want := range cases {
		cmds, err := kubectlCommands(line)
		if err != nil || len(cmds) != 1 {
			t.Fatalf("%s: %d commands, %v", line, len(cmds), err)
		}
		if got := cmds[0].FlagsBeforePlugin(); got != want {
			t.Errorf("%s: flags before the plugin %v, want %v", line, got, want)
		}
	}
}

// TestCommandsAreFoundInCodeBlocksAndSpans: the extraction finds the commands of fenced blocks (with
// continuations, comments and environment assignments) and of code spans over two lines, and nothing else.
func TestCommandsAreFoundInCodeBlocksAndSpans(t *testing.T) {
	md := "# The plugin (kubectl apimsync status)\n\n" +
		"Run `kubectl apimsync\nstatus -n team-a` first, then `kubectl get apimsync`.\n\n" +
		"```sh\n" +
		"THREESCALE_TOKEN=... kubectl apimsync export --all \\\n  --out ./acme   # a comment\n" +
		"for k in a b; do kubectl patch \"$k\" --type merge -p '{\"metadata\":{\"finalizers\":null}}'; done\n" +
		"```\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds, err := Commands(dir, "x.md")
	if err != nil {
		t.Fatal(err)
	}
	type found struct {
		Line   int
		Args   string
		Inline bool
	}
	var got []found
	for _, c := range cmds {
		got = append(got, found{c.Line, strings.Join(c.Args, "|"), c.Inline})
	}
	want := []found{
		{3, "apimsync|status|-n|team-a", true},
		{3, "get|apimsync", true},
		{7, "apimsync|export|--all|--out|./acme", false},
		{9, `patch|$k|--type|merge|-p|{"metadata":{"finalizers":null}}`, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

// stops are the errors a documented command may end on here, with no cluster, tenant or input files: a
// local file or directory of the example that this checkout lacks, or a token it does not set.
var stops = regexp.MustCompile(`no such file or directory|not a valid directory|the access token is not set`)

// runPlugin runs the plugin with args where it can do no harm: in an empty directory, with an
// environment of its own (no token), a kubeconfig naming a stand-in API server and HTTP(S)_PROXY
// pointing at it, so that any request, to the cluster or to 3scale, reaches the stand-in, which answers
// 503. It returns nil when the command got past the plugin's own checks: it asked for help, reached the
// stand-in, or stopped on an input this checkout lacks; else the plugin's error.
func runPlugin(t *testing.T, args []string) error {
	t.Helper()
	var requests atomic.Int64
	standIn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "no cluster and no 3scale in the documentation test", http.StatusServiceUnavailable)
	}))
	defer standIn.Close()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: docs, cluster: {server: %q}}]
users: [{name: docs, user: {token: docs}}]
contexts: [{name: docs, context: {cluster: docs, user: docs, namespace: default}}]
current-context: docs
`, standIn.URL)
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, plugin, args...)
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + dir, "KUBECONFIG=" + kubeconfig, "HTTPS_PROXY=" + standIn.URL, "HTTP_PROXY=" + standIn.URL, "NO_PROXY="}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &exit):
		t.Fatalf("cannot run %s: %v", plugin, err)
	case requests.Load() > 0, stops.Match(out):
		return nil
	}
	return fmt.Errorf("exit %d: %s", exit.ExitCode(), strings.TrimSpace(string(out)))
}
