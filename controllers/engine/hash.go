package engine

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// HashOf returns a short stable hash of the JSON encoding of values: the fingerprint of everything a
// remote object derives from. Map keys are encoded in sorted order, so equal inputs give equal hashes.
func HashOf(values ...any) string { return keyedHash(nil, values...) }

// KeyedHash is HashOf keyed with key (HMAC-SHA256): without the key, the hash cannot be used to test
// guesses of the values it covers.
func KeyedHash(key []byte, values ...any) string { return keyedHash(key, values...) }

// keyedHash is HashOf keyed with HMAC-SHA256 when key is not empty: without the key, the hash cannot be
// used to test guesses of the values it covers.
func keyedHash(key []byte, values ...any) string {
	h := sha256.New()
	if len(key) > 0 {
		h = hmac.New(sha256.New, key)
	}
	enc := json.NewEncoder(h)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			// Spec types always encode; an error here means a programming mistake, so never match.
			return "unhashable"
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}
