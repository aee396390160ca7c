package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// buildBinaries builds the service and the hammer of the working tree into
// bin/ under root.
func buildBinaries(ctx context.Context, root string) error {
	if err := goBuild(ctx, root, filepath.Join(root, "bin", "api"), "./cmd/api"); err != nil {
		return err
	}
	return goBuild(ctx, root, filepath.Join(root, "bin", "hammer"), "./cmd/hammer")
}

// goBuild builds the package pkg of the module in dir into out, with the
// environment's build settings (GOFLAGS: the Makefile's tags) and more.
func goBuild(ctx context.Context, dir, out, pkg string, more ...string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), more...)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s in %s: %w", pkg, dir, err)
	}
	return nil
}

// buildRevision builds the service as it was at the git revision rev into
// out, from its sources extracted in work/before-src.
func buildRevision(ctx context.Context, root, rev, work, out string) error {
	src := filepath.Join(work, "before-src")
	if err := os.RemoveAll(src); err != nil {
		return err
	}
	if err := extractRevision(ctx, root, rev, src); err != nil {
		return err
	}
	return goBuild(ctx, src, out, "./cmd/api")
}

// extractRevision writes the tree of rev (git archive) into dir.
func extractRevision(ctx context.Context, root, rev, dir string) error {
	cmd := exec.CommandContext(ctx, "git", "archive", "--format=tar", rev)
	cmd.Dir, cmd.Stderr = root, os.Stderr
	archive, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	untarErr := untar(archive, dir)
	_, _ = io.Copy(io.Discard, archive)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %w", rev, err)
	}
	if untarErr != nil {
		return fmt.Errorf("extract %s: %w", rev, untarErr)
	}
	return nil
}

// untar writes the directories, files and links of a tar stream under dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue // git's record of the commit, not a file
		}
		name := filepath.Clean(h.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("%s: outside the archive's directory", h.Name)
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, h.FileInfo().Mode().Perm())
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.Symlink(h.Linkname, path)
			}
		default:
			err = fmt.Errorf("%s: unexpected entry type %q", h.Name, h.Typeflag)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
