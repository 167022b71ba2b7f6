package ociimage

import (
	"bytes"
	"debug/elf"
	"fmt"
)

type elfFacts struct {
	arch   string // GOARCH
	interp bool   // has a program interpreter: dynamically linked
}

func elfInfo(bin []byte) (elfFacts, error) {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return elfFacts{}, fmt.Errorf("not an ELF binary: %w", err)
	}
	defer f.Close()
	var facts elfFacts
	switch f.Machine {
	case elf.EM_X86_64:
		facts.arch = "amd64"
	case elf.EM_AARCH64:
		facts.arch = "arm64"
	default:
		facts.arch = f.Machine.String()
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			facts.interp = true
		}
	}
	return facts, nil
}
