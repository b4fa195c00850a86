package failover

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
)

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		fmt.Fprintln(os.Stderr, "failover tests need redis-server on PATH: apt-get install -y redis-server")
		os.Exit(1)
	}
	testbinary.Main(m)
}

// httpClient bounds every request of the tests.
var httpClient = &http.Client{Timeout: 3 * time.Second}

// getStatus returns the status code of GET url, or 0 when the request fails.
func getStatus(url string) int {
	resp, err := httpClient.Get(url)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
