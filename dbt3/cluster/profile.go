package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// debugArgs are the --debug-listen flags of a daemon about to start: a free loopback port
// with Config.Profiling, none otherwise.
func (c *Cluster) debugArgs() ([]string, error) {
	if !c.cfg.Profiling {
		return nil, nil
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	return []string{"--debug-listen", "127.0.0.1:" + strconv.Itoa(ports[0])}, nil
}

// debugAddr is the address in debugArgs' flags, or "".
func debugAddr(args []string) string {
	if len(args) == 2 {
		return args[1]
	}
	return ""
}

// profiled are the daemons a query over transport runs on: its exemgr and every primproc.
func (c *Cluster) profiled(transport string) ([]*proc, error) {
	em := c.exemgrs[transport]
	if em == nil {
		return nil, fmt.Errorf("cluster: no exemgr for transport %s", transport)
	}
	out := append([]*proc{em}, c.primprocs...)
	for _, p := range out {
		if p.debug == "" {
			return nil, fmt.Errorf("cluster: %s has no debug listener (start the cluster with Profiling)", p.name)
		}
	}
	return out, nil
}

// StartProfiles starts a CPU profile in exemgr of transport and in every primproc.
func (c *Cluster) StartProfiles(ctx context.Context, transport string) error {
	ps, err := c.profiled(transport)
	if err != nil {
		return err
	}
	for i, p := range ps {
		if _, err := profileRequest(ctx, p, "start"); err != nil {
			for _, started := range ps[:i] {
				_, _ = profileRequest(ctx, started, "stop")
			}
			return err
		}
	}
	return nil
}

// StopProfiles stops the profiles StartProfiles started and writes each daemon's into dir
// as PREFIX-NAME.pprof (go tool pprof reads them); it returns the files written.
func (c *Cluster) StopProfiles(ctx context.Context, transport, dir, prefix string) ([]string, error) {
	ps, err := c.profiled(transport)
	if err != nil {
		return nil, err
	}
	var files []string
	var errs []error
	for _, p := range ps {
		prof, err := profileRequest(ctx, p, "stop")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		path := filepath.Join(dir, prefix+"-"+p.name+".pprof")
		if err := os.WriteFile(path, prof, 0o644); err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, path)
	}
	return files, errors.Join(errs...)
}

// profileRequest posts start or stop to p's bracketed CPU profile and returns the body.
func profileRequest(ctx context.Context, p *proc, what string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.debug+"/debug/colink/cpuprofile/"+what, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: CPU profile %s: %w", p.name, what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: CPU profile %s: %w", p.name, what, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: CPU profile %s: %s: %s", p.name, what, resp.Status, body)
	}
	return body, nil
}
