package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// HashOf returns a short stable hash of the JSON encoding of values: the fingerprint of everything a
// remote object derives from. Map keys are encoded in sorted order, so equal inputs give equal hashes.
func HashOf(values ...any) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			// Spec types always encode; an error here means a programming mistake, so never match.
			return "unhashable"
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}
