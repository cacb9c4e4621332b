package pack

import (
	"bytes"
	"fmt"

	"github.com/locklab/locklab/internal/lab/report"
)

// sameFiles says where two renderings of a report differ: "" when every
// file has the same name and bytes, else the first file that does not, and
// the first line where it differs. Pack installs an archive only when the
// report it renders is the report runs/ renders.
func sameFiles(a, b []report.File) string {
	for i := range max(len(a), len(b)) {
		switch {
		case i >= len(a):
			return b[i].Name + " is only in the second"
		case i >= len(b):
			return a[i].Name + " is only in the first"
		case a[i].Name != b[i].Name:
			return a[i].Name + " against " + b[i].Name
		case !bytes.Equal(a[i].Data, b[i].Data):
			la, lb := bytes.Split(a[i].Data, []byte("\n")), bytes.Split(b[i].Data, []byte("\n"))
			line := 0
			for line < min(len(la), len(lb)) && bytes.Equal(la[line], lb[line]) {
				line++
			}
			return fmt.Sprintf("%s differs from line %d", a[i].Name, line+1)
		}
	}
	return ""
}
