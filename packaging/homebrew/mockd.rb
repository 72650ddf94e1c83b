# Homebrew formula for mockd, published as Formula/mockd.rb in github.com/mockd/homebrew-tap
# (`brew install mockd/tap/mockd`). This file is the template: scripts/release/homebrew-formula.sh
# fills in the version and the archives' SHA-256 sums from a release's checksums.txt, and the
# release workflow pushes the result to the tap.
class Mockd < Formula
  desc "Mock HTTP, HTTPS, TCP and SMTP services; speaks Mountebank's API, only faster"
  homepage "https://github.com/mockd/mockd"
  version "@VERSION@"
  license "Apache-2.0"

  on_macos do
    on_arm do
      url "https://github.com/mockd/mockd/releases/download/v@VERSION@/mockd_darwin_arm64.tar.gz"
      sha256 "@SHA256_darwin_arm64@"
    end
    on_intel do
      url "https://github.com/mockd/mockd/releases/download/v@VERSION@/mockd_darwin_amd64.tar.gz"
      sha256 "@SHA256_darwin_amd64@"
    end
  end

  on_linux do
    on_arm do
      url "https://github.com/mockd/mockd/releases/download/v@VERSION@/mockd_linux_arm64.tar.gz"
      sha256 "@SHA256_linux_arm64@"
    end
    on_intel do
      url "https://github.com/mockd/mockd/releases/download/v@VERSION@/mockd_linux_amd64.tar.gz"
      sha256 "@SHA256_linux_amd64@"
    end
  end

  def install
    bin.install "mockd"
    bash_completion.install "completions/mockd.bash" => "mockd"
    zsh_completion.install "completions/mockd.zsh" => "_mockd"
    fish_completion.install "completions/mockd.fish"
  end

  test do
    admin = free_port
    port = free_port
    (testpath/"stubs.yaml").write <<~YAML
      imposters:
        - port: #{port}
          protocol: http
          stubs:
            - predicates: [{equals: {method: GET, path: /hello}}]
              responses: [{is: {statusCode: 200, body: hello from mockd}}]
    YAML
    pid = spawn bin/"mockd", "serve", "--host", "127.0.0.1", "--port", admin.to_s, "-c", testpath/"stubs.yaml"
    begin
      30.times do
        break if quiet_system bin/"mockd", "healthcheck", "--host", "127.0.0.1", "--port", admin.to_s, "--imposters"

        sleep 1
      end
      assert_equal "hello from mockd", shell_output("curl -fsS http://127.0.0.1:#{port}/hello")
      assert_match "mockd #{version}", shell_output("#{bin}/mockd --version")
    ensure
      Process.kill("TERM", pid)
      Process.wait(pid)
    end
  end
end
