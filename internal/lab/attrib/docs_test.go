package attrib

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the category table in docs/operations.md from Categories")

const operationsDoc = "../../../docs/operations.md"

// docsTable is the category table as docs/operations.md shows it, from
// Categories: the docs keep no list of their own.
func docsTable() string {
	var b strings.Builder
	b.WriteString("| category | holds |\n| --- | --- |\n")
	for _, c := range Categories() {
		b.WriteString("| `" + c.Name + "` | " + c.Holds + " |\n")
	}
	return b.String()
}

func TestDocsTable(t *testing.T) {
	raw, err := os.ReadFile(operationsDoc)
	require.NoError(t, err)
	doc := string(raw)
	head := "| category | holds |\n"
	start := strings.Index(doc, head)
	require.GreaterOrEqual(t, start, 0, "docs/operations.md has no category table")
	end := start + strings.Index(doc[start:], "\n\n") + 1
	if *update {
		doc = doc[:start] + docsTable() + doc[end:]
		require.NoError(t, os.WriteFile(operationsDoc, []byte(doc), 0o644))
		return
	}
	assert.Equal(t, docsTable(), doc[start:end], "rewrite it with go test ./internal/lab/attrib -run DocsTable -update")
}
