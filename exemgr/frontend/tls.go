package frontend

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"sync"
)

// tlsConfig is the TLS the server offers MySQL clients, from --tls-cert and --tls-key.
type tlsConfig struct {
	cfg *tls.Config
	// key is the certificate's private key if it is RSA, for caching_sha2_password's
	// public-key exchange.
	key *rsa.PrivateKey
}

// loadTLS reads the certificate and key; neither given means no TLS.
func loadTLS(certFile, keyFile string) (*tlsConfig, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "":
		return nil, errors.New("--tls-key needs --tls-cert")
	case keyFile == "":
		return nil, errors.New("--tls-cert needs --tls-key")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	t := &tlsConfig{cfg: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	t.key, _ = cert.PrivateKey.(*rsa.PrivateKey)
	return t, nil
}

func (t *tlsConfig) server(c net.Conn) *tls.Conn { return tls.Server(c, t.cfg) }

// authState is what the server keeps for caching_sha2_password: the RSA key its clients may
// encrypt their password with, and the accounts whose full authentication succeeded since
// the server started (MySQL's cache: they may log in by the scramble alone). The accounts
// are fixed at start, so an entry never goes stale.
type authState struct {
	rsaKey func() (*rsa.PrivateKey, error)

	mu     sync.Mutex
	cached map[string]bool // guarded by mu
}

// rsaKeyBits is the size of a generated key, MySQL's.
const rsaKeyBits = 2048

func newAuthState(t *tlsConfig) *authState {
	a := &authState{cached: map[string]bool{}}
	a.rsaKey = sync.OnceValues(func() (*rsa.PrivateKey, error) {
		if t != nil && t.key != nil {
			return t.key, nil
		}
		// Generated on the first client that needs it (about 0.1 s), not at every start.
		key, err := rsa.GenerateKey(rand.Reader, rsaKeyBits)
		if err != nil {
			return nil, fmt.Errorf("generate the RSA key for caching_sha2_password: %w", err)
		}
		return key, nil
	})
	return a
}

func (a *authState) sha2Cached(user string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cached[user]
}

func (a *authState) sha2Remember(user string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cached[user] = true
}

// publicKeyPEM is the key's public half as caching_sha2_password sends it: PKIX in PEM.
func publicKeyPEM(key *rsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("RSA public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}
