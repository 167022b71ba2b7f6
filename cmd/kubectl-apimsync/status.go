package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
	"github.com/apimsync/apimsync/controllers"
)

// statusRow is one object in `kubectl apimsync status`.
type statusRow struct {
	Tenant    string `json:"tenant"`
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	State     string `json:"state"`
	Reason    string `json:"reason"`
	Message   string `json:"message,omitempty"`
	RemoteID  int64  `json:"remoteID,omitempty"`
	// LastSync is when the object last read or wrote 3scale (nil: never).
	LastSync *metav1.Time `json:"lastSync,omitempty"`
}

// statusOptions are the flags of `kubectl apimsync status`.
type statusOptions struct {
	flags         *genericclioptions.ConfigFlags
	streams       genericiooptions.IOStreams
	allNamespaces bool
	output        string
	watch         bool
	interval      time.Duration
}

func newStatusCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &statusOptions{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "status [-A] [-o table|yaml|json] [--watch]",
		Short: "Show the state of every apimsync object, grouped by 3scale tenant",
		Long: `Show every apimsync object of the namespace (or of all, with -A): its state (Synced, InSync, Orphan or
Invalid), the reason, its id in 3scale and how long ago it last read or wrote 3scale, grouped by tenant.`,
		Example: `  # The objects of the current namespace
  kubectl apimsync status

  # Every namespace, as JSON
  kubectl apimsync status -A -o json

  # Follow the changes
  kubectl apimsync status --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "List the objects of every namespace.")
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "Output format: table, yaml or json.")
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", false, "Print again every --interval until interrupted.")
	cmd.Flags().DurationVar(&o.interval, "interval", 2*time.Second, "How often --watch prints.")
	return cmd
}

func (o *statusOptions) run(ctx context.Context) error {
	if !slices.Contains([]string{"table", "yaml", "json"}, o.output) {
		return fmt.Errorf("unknown output format %q: use table, yaml or json", o.output)
	}
	c, namespace, err := clientFor(o.flags)
	if err != nil {
		return err
	}
	if o.allNamespaces {
		namespace = ""
	}
	for {
		rows, err := statusRows(ctx, c, namespace)
		if err != nil {
			return err
		}
		if err := printStatus(o.streams.Out, rows, o.output, time.Now()); err != nil {
			return err
		}
		if !o.watch {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.interval):
		}
		fmt.Fprintln(o.streams.Out)
	}
}

// statusRows lists the apimsync objects of namespace (all when ""), sorted by tenant, kind and name.
func statusRows(ctx context.Context, c client.Client, namespace string) ([]statusRow, error) {
	var rows []statusRow
	for _, l := range controllers.ObjectLists() {
		if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
			if meta.IsNoMatchError(err) {
				return nil, fmt.Errorf("apimsync's resources are not installed in this cluster (make install): %w", err)
			}
			return nil, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			rows = append(rows, rowOf(it.(client.Object)))
		}
	}
	slices.SortFunc(rows, func(a, b statusRow) int {
		return strings.Compare(a.Tenant+"\x00"+a.Namespace+"\x00"+a.Kind+"\x00"+a.Name, b.Tenant+"\x00"+b.Namespace+"\x00"+b.Kind+"\x00"+b.Name)
	})
	return rows, nil
}

// rowOf is an object's row: its sync state from its conditions.
func rowOf(obj client.Object) statusRow {
	row := statusRow{Namespace: obj.GetNamespace(), Kind: kindOf(obj), Name: obj.GetName(), State: "Pending", Reason: "NotSyncedYet"}
	var conditions []metav1.Condition
	switch t := obj.(type) {
	case v1alpha1.SyncedObject:
		st := t.GetSyncStatus()
		conditions, row.Tenant, row.RemoteID, row.LastSync = st.Conditions, st.TenantHost, t.GetRemoteID(), st.LastSyncTime
	case *v1alpha1.OpenAPI:
		conditions = t.Status.Conditions
	}
	for _, s := range v1alpha1.SyncConditions {
		if c := meta.FindStatusCondition(conditions, s); c != nil && c.Status == metav1.ConditionTrue {
			row.State, row.Reason, row.Message = s, c.Reason, c.Message
		}
	}
	return row
}

// kindOf is the kind of an apimsync object (its Go type's name: the client leaves TypeMeta empty).
func kindOf(obj client.Object) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", obj), "*v1alpha1.")
}

// printStatus writes rows in the format given: a table per tenant, or YAML or JSON.
func printStatus(out io.Writer, rows []statusRow, format string, now time.Time) error {
	switch format {
	case "json":
		if rows == nil {
			rows = []statusRow{}
		}
		b, err := json.MarshalIndent(map[string]any{"items": rows}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, string(b))
		return err
	case "yaml":
		b, err := yaml.Marshal(map[string]any{"items": rows})
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(out, "No apimsync objects found.")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	tenant := "\x00"
	for _, r := range rows {
		if r.Tenant != tenant {
			if tenant != "\x00" {
				fmt.Fprintln(w)
			}
			tenant = r.Tenant
			name := r.Tenant
			if name == "" {
				name = "(no tenant yet)"
			}
			fmt.Fprintf(w, "TENANT %s\n", name)
			fmt.Fprintln(w, "NAMESPACE\tKIND\tNAME\tSTATE\tREASON\t3SCALE ID\tLAST SYNC\tMESSAGE")
		}
		id, last := "-", "never"
		if r.RemoteID != 0 {
			id = fmt.Sprint(r.RemoteID)
		}
		if r.LastSync != nil {
			last = duration.HumanDuration(now.Sub(r.LastSync.Time)) + " ago"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Namespace, r.Kind, r.Name, r.State, r.Reason, id, last, oneLine(r.Message, 100))
	}
	return w.Flush()
}

// oneLine is s on one line, at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}
