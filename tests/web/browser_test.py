"""A real browser over the web front: Debian's chromium (headless) driven by
chromium-driver through python3-selenium opens a model page and a card page
served by the real binaries, checks what a reader sees, that the page ran no
script of its own beyond the bundled one and that nothing broke the CSP, and
optionally saves screenshots (docs/images/ for the README).

    python3 tests/web/browser_test.py --build=build [--screenshots=docs/images]

Exits 77 (CTest's skip code) when chromium, chromium-driver or selenium is
missing."""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

ARGS = None
SKIP = 77


def wait_for_ports(path, key, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path):
            values = dict(line.strip().split("=", 1) for line in open(path) if "=" in line)
            if key in values and "metrics_port" in values:
                return values
        time.sleep(0.05)
    raise RuntimeError(f"no {key} in {path}")


class Stack:
    """catalog-service, estimator-service and modelatlas-web on loopback ports."""

    def __init__(self, build):
        self.dir = tempfile.mkdtemp(prefix="web_browser_")
        self.processes = []
        catalog = self.start("catalog", [f"{build}/catalog-service/catalog-service",
                                         f"--sqlite_path={self.dir}/catalog.db",
                                         "--grpc_address=127.0.0.1:0"], "grpc_port")
        estimator = self.start("estimator", [f"{build}/estimator-service/estimator-service",
                                             f"--catalog_address=127.0.0.1:{catalog}",
                                             "--grpc_address=127.0.0.1:0",
                                             "--readiness_interval=200ms"], "grpc_port")
        web = self.start("web", [f"{build}/web/modelatlas-web",
                                 f"--catalog_address=127.0.0.1:{catalog}",
                                 f"--estimator_address=127.0.0.1:{estimator}",
                                 "--http_address=127.0.0.1:0"], "http_port")
        self.base = f"http://127.0.0.1:{web}"
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(self.base + "/readyz", timeout=2).status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("modelatlas-web never became ready")

    def start(self, name, argv, key):
        ports = f"{self.dir}/{name}.ports"
        log = open(f"{self.dir}/{name}.log", "w")
        self.processes.append(subprocess.Popen(
            argv + ["--metrics_address=127.0.0.1:0", f"--port_file={ports}"],
            stdout=log, stderr=subprocess.STDOUT))
        return int(wait_for_ports(ports, key)[key])

    def stop(self):
        for process in reversed(self.processes):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class BrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        cls.stack = Stack(ARGS.build)
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1200,2200"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        cls.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.stack.stop()

    def open(self, path, screenshot=None):
        self.driver.get(self.stack.base + path)
        if screenshot and ARGS.screenshots:
            os.makedirs(ARGS.screenshots, exist_ok=True)
            self.driver.save_screenshot(os.path.join(ARGS.screenshots, screenshot))
        # Content-Security-Policy violations and script errors reach the console.
        problems = [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]
        self.assertEqual(problems, [], path)
        return self.driver.find_element("tag name", "body").text

    def test_model_page(self):
        from selenium.webdriver.common.by import By
        text = self.open("/models/llama-3-1-8b", "model-page.png")
        self.assertIn("Needs 17.7 GB of memory to run", text)
        self.assertIn("Assumed workload: 4,096-token context", text)
        self.assertIn("Which cards run it", text)
        self.assertTrue(self.driver.find_elements(By.CSS_SELECTOR, "svg.memory rect"))
        # The bundled script re-plans when the format changes.
        select = self.driver.find_element(By.NAME, "weights")
        select.find_element(By.CSS_SELECTOR, "option[value=int4]").click()
        deadline = time.time() + 10
        while "weights=int4" not in self.driver.current_url and time.time() < deadline:
            time.sleep(0.1)
        self.assertIn("weights=int4", self.driver.current_url)
        self.assertIn("weights INT4", self.driver.find_element(By.TAG_NAME, "body").text)

    def test_closed_model_page(self):
        text = self.open("/models/megatron-bert")
        self.assertIn("No estimate: weights not published", text)
        self.assertIn("2.2 × 10²² FLOP", text)

    def test_card_page(self):
        from selenium.webdriver.common.by import By
        text = self.open("/hardware/nvidia-h100-sxm5-80gb", "card-page.png")
        self.assertIn("What it runs", text)
        link = self.driver.find_element(By.CSS_SELECTOR, "#runs table a[href^='/models/']")
        link.click()
        self.assertIn("/models/", self.driver.current_url)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--screenshots", default="")
    ARGS, rest = parser.parse_known_args()
    for tool in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not os.path.exists(tool):
            print(f"not installed, skipping: {tool}")
            return SKIP
    try:
        import selenium  # noqa: F401
    except ImportError:
        print("python3-selenium not installed, skipping")
        return SKIP
    result = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
