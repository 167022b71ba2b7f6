package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync/atomic"
	"text/tabwriter"

	tsclient "github.com/apimsync/apimsync/client"
	"github.com/apimsync/apimsync/controllers"
	"github.com/apimsync/apimsync/controllers/plugin"
)

// unmanagedReport is what `diff --unmanaged -o json` prints.
type unmanagedReport struct {
	// Tenant is the tenant read (its admin host).
	Tenant string `json:"tenant"`
	// Unmanaged are its objects no apimsync object holds.
	Unmanaged []plugin.RemoteItem `json:"unmanaged"`
	// Calls are the requests made to read them.
	Calls int64 `json:"calls"`
}

// runUnmanaged lists the objects of the namespace's tenant that no apimsync object of the cluster holds,
// and exits 1 when there is any.
func (o *diffOptions) runUnmanaged(ctx context.Context) error {
	if len(o.files) > 0 || o.kustomize != "" {
		return fmt.Errorf("--unmanaged reads the tenant and the cluster, not files: leave out -f and -k")
	}
	if o.output != "" && o.output != "json" {
		return fmt.Errorf("-o takes json, or nothing for a table")
	}
	c, namespace, err := clientFor(o.flags)
	if err != nil {
		return err
	}
	adminURL, token, insecure, err := providerSecret(ctx, c, namespace, o.secret)
	if err != nil {
		return err
	}
	tenant, err := tsclient.NormalizeTenant(adminURL)
	if err != nil {
		return fmt.Errorf("the Secret's admin URL: %w", err)
	}
	var calls atomic.Int64
	remote, err := tenantClient(ctx, adminURL, token, insecure, func(tsclient.CallInfo) { calls.Add(1) })
	if err != nil {
		return err
	}
	items, err := controllers.UnmanagedObjects(ctx, c, remote, tenant)
	if err != nil {
		return err
	}
	report := unmanagedReport{Tenant: tenant, Unmanaged: items, Calls: calls.Load()}
	if report.Unmanaged == nil {
		report.Unmanaged = []plugin.RemoteItem{}
	}
	if o.output == "json" {
		enc := json.NewEncoder(o.streams.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else {
		printUnmanaged(o.streams.Out, report)
	}
	if len(items) > 0 {
		return codedError{code: exitChanges}
	}
	return nil
}

// printUnmanaged writes the report as a table, and a last line with the count and the calls made.
func printUnmanaged(out io.Writer, r unmanagedReport) {
	if len(r.Unmanaged) > 0 {
		w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "KIND\tID\tNAME\tOF")
		for _, it := range r.Unmanaged {
			kind := it.Kind
			if it.Collection != "" {
				kind += " (" + it.Collection + ")"
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", kind, it.ID, it.SystemName, it.Parent)
		}
		_ = w.Flush()
	}
	fmt.Fprintf(out, "%d objects of tenant %s held by no apimsync object (%d calls to read it)\n", len(r.Unmanaged), r.Tenant, r.Calls)
}
