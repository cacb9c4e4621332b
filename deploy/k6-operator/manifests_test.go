// Package k6operator holds the k6-operator manifests (README.md, "Beyond one
// machine"); this test checks them without a cluster.
package k6operator_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

const root = "../.."

// manifest is the part of a Kubernetes object the checks read.
type manifest struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"` // ConfigMap
	Spec struct {
		// TestRun
		Parallelism int `yaml:"parallelism"`
		Script      struct {
			ConfigMap struct {
				Name string `yaml:"name"`
				File string `yaml:"file"`
			} `yaml:"configMap"`
		} `yaml:"script"`
		Arguments string  `yaml:"arguments"`
		Runner    podPart `yaml:"runner"`
		// Job
		Template struct {
			Spec struct {
				Containers []podPart `yaml:"containers"`
				Volumes    []struct {
					Name      string `yaml:"name"`
					ConfigMap struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type envVar struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// podPart is what a TestRun's runner and a Job's container share.
type podPart struct {
	Image   string   `yaml:"image"`
	Args    []string `yaml:"args"`
	Env     []envVar `yaml:"env"`
	EnvFrom []struct {
		ConfigMapRef struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
	} `yaml:"envFrom"`
}

func loadManifests(t *testing.T) map[string]manifest {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]manifest{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(false)
		for {
			var m manifest
			if err := dec.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else {
				require.NoError(t, err, f)
			}
			require.NotEmpty(t, m.Kind, f)
			out[m.Kind+"/"+m.Metadata.Name] = m
		}
	}
	return out
}

// runScript is what run.sh puts in the scripts' ConfigMap: its name, and
// the archives by file name with the script each is made from.
func runScript(t *testing.T) (configMap string, archives map[string]string) {
	t.Helper()
	b, err := os.ReadFile("run.sh")
	require.NoError(t, err)
	s := string(b)
	cm := regexp.MustCompile(`create configmap (\S+)`).FindStringSubmatch(s)
	require.NotNil(t, cm, "run.sh creates a configmap")
	srcs := regexp.MustCompile(`(?m)^\s*for s in ([^;]+); do`).FindStringSubmatch(s)
	require.NotNil(t, srcs, "run.sh archives a list of scripts")
	archives = map[string]string{}
	for _, src := range strings.Fields(srcs[1]) {
		name := strings.TrimSuffix(filepath.Base(src), ".js") + ".tar"
		require.Contains(t, s, "--from-file=\"$tmp/"+name+"\"", "run.sh puts %s in the ConfigMap", name)
		archives[name] = src
	}
	return cm[1], archives
}

// envRead is every environment variable the k6 scripts read, found in their
// source: __ENV.X, __ENV['X'] and the env helpers' env*('X', ...).
func envRead(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "k6", "*.js"))
	require.NoError(t, err)
	lib, err := filepath.Glob(filepath.Join(root, "k6", "lib", "*.js"))
	require.NoError(t, err)
	files = append(append(files, lib...), filepath.Join(root, "testingscript.js"))
	re := regexp.MustCompile(`__ENV\.([A-Z0-9_]+)|__ENV\[['"]([A-Z0-9_]+)['"]\]|\benv[A-Za-z]*\(\s*['"]([A-Z0-9_]+)['"]`)
	out := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			out[m[1]+m[2]+m[3]] = true
		}
	}
	require.NotEmpty(t, out)
	return out
}

// readable reports whether the scripts or k6 itself read name: k6 reads
// its own K6_* variables.
func readable(read map[string]bool, name string) bool {
	return read[name] || strings.HasPrefix(name, "K6_")
}

func TestManifests(t *testing.T) {
	ms := loadManifests(t)
	cmName, archives := runScript(t)
	read := envRead(t)
	for _, src := range archives {
		assert.FileExists(t, filepath.Join(root, src), "run.sh archives it")
	}
	configMaps := map[string]manifest{cmName: {}} // the scripts' one is made by run.sh
	for _, m := range ms {
		if m.Kind == "ConfigMap" {
			configMaps[m.Metadata.Name] = m
			for k := range m.Data {
				assert.True(t, readable(read, k), "ConfigMap %s sets %s, which no script reads", m.Metadata.Name, k)
			}
		}
	}
	checkPod := func(what string, p podPart) {
		assert.Regexp(t, `^grafana/k6:\d+\.\d+\.\d+$`, p.Image, "%s: a pinned k6 image", what)
		for _, e := range p.Env {
			assert.True(t, readable(read, e.Name), "%s sets %s, which no script reads", what, e.Name)
		}
		for _, ef := range p.EnvFrom {
			assert.Contains(t, configMaps, ef.ConfigMapRef.Name, "%s takes its environment from a ConfigMap that exists", what)
		}
	}

	var testRuns []string
	for key, m := range ms {
		switch m.Kind {
		case "TestRun":
			testRuns = append(testRuns, key)
			assert.Equal(t, "k6.io/v1alpha1", m.APIVersion, key)
			assert.Greater(t, m.Spec.Parallelism, 1, "%s runs over several runners", key)
			assert.Equal(t, cmName, m.Spec.Script.ConfigMap.Name, "%s: the scripts' ConfigMap", key)
			src, ok := archives[m.Spec.Script.ConfigMap.File]
			assert.True(t, ok, "%s runs %s, which run.sh does not archive", key, m.Spec.Script.ConfigMap.File)
			assert.Contains(t, m.Spec.Arguments, "--no-usage-report", key)
			checkPod(key, m.Spec.Runner)
			if src == "k6/bank.js" {
				// setup() resets the bank in every runner unless RESET=0.
				assert.Contains(t, m.Spec.Runner.Env, envVar{"RESET", "0"}, "%s: the bank runners must not reset (RESET=0)", key)
			}
		case "Job":
			volumes := map[string]string{}
			for _, v := range m.Spec.Template.Spec.Volumes {
				volumes[v.Name] = v.ConfigMap.Name
			}
			assert.Equal(t, map[string]string{"scripts": cmName}, volumes, key)
			for _, c := range m.Spec.Template.Spec.Containers {
				checkPod(key, c)
				require.NotEmpty(t, c.Args, key)
				tarball := filepath.Base(c.Args[len(c.Args)-1])
				assert.Equal(t, "k6/reset.js", archives[tarball], "%s runs the reset script's archive", key)
				assert.Contains(t, c.Args, "--no-usage-report", key)
			}
		}
	}
	slices.Sort(testRuns)
	assert.Equal(t, []string{"TestRun/locklab-bank", "TestRun/locklab-counter"}, testRuns)
}

// TestManifestChecksCatch is the control: the env check refuses a name no
// script reads, and the scan finds names it must.
func TestManifestChecksCatch(t *testing.T) {
	read := envRead(t)
	assert.False(t, readable(read, "NO_SUCH_KNOB"))
	assert.False(t, readable(read, "SKIP_RESET"), "the scripts' switch is RESET=0")
	for _, name := range []string{"ADDR", "RESET", "SCENARIO", "CHECK_BODY", "WORKLOAD", "VUS"} {
		assert.True(t, readable(read, name), name)
	}
	assert.True(t, readable(read, "K6_PROMETHEUS_RW_SERVER_URL"), "k6's own")
}
