// Command kubectl-apimsync is apimsync's kubectl plugin (`kubectl apimsync ...`): the state of the
// objects apimsync syncs, and a tenant's API products exported as apimsync resources.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := newRootCommand(streams).Execute(); err != nil {
		if err.Error() != "" {
			fmt.Fprintln(os.Stderr, "error:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitCode is the process's exit code for err: 1 unless the error says otherwise.
func exitCode(err error) int {
	if e, ok := err.(interface{ ExitCode() int }); ok {
		return e.ExitCode()
	}
	return 1
}

// newRootCommand is `kubectl apimsync`, with kubectl's usual flags (--kubeconfig, --context,
// --namespace...).
func newRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use: "kubectl-apimsync",
		// Shown as kubectl shows its plugins: `kubectl apimsync status`.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl apimsync"},
		Short:       "Inspect apimsync's objects and bring 3scale-operator resources under apimsync",
		Long: `kubectl apimsync works with the objects apimsync keeps in 3scale.

 status    the state of every apimsync object, grouped by 3scale tenant
 export    a 3scale tenant as apimsync resources that adopt it with no write
 convert   3scale-operator resources (files or the cluster) into apimsync's, with a report
 diff      what applying apimsync resources would do to 3scale (exit 1 when something in 3scale would
           change, 3 when an object would be Invalid or wait, 2 on an error)

Find more information at: https://github.com/apimsync/apimsync/tree/main/docs`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newStatusCommand(flags, streams), newExportCommand(flags, streams), newConvertCommand(flags, streams), newDiffCommand(flags, streams))
	return root
}
