// Command bundle writes apimsync's OLM bundle (make bundle): see internal/olmbundle.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/apimsync/apimsync/internal/olmbundle"
)

func main() {
	o := olmbundle.Options{}
	flag.StringVar(&o.Root, "root", ".", "the repository's root")
	flag.StringVar(&o.Out, "out", "bundle", "the bundle directory to write (replaced)")
	flag.StringVar(&o.Version, "version", "", "the release's semantic version, without v (Makefile RELEASE)")
	flag.StringVar(&o.Image, "image", "", "the manager's image the bundle installs")
	flag.StringVar(&o.Channel, "channel", "candidate", "the OLM channel, also the default one")
	flag.Parse()
	if o.Version == "" || o.Image == "" {
		fmt.Fprintln(os.Stderr, "bundle: --version and --image are required")
		os.Exit(2)
	}
	if err := olmbundle.Write(o); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}
