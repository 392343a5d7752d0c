"""A real browser over the web front: Debian's chromium (headless) driven by
chromium-driver through python3-selenium opens a model page and a card page
served by the real binaries, checks what a reader sees, that the page ran no
script of its own beyond the bundled one and that nothing broke the CSP, and
optionally saves screenshots (docs/images/ for the README).

    python3 tests/web/browser_test.py --build=build [--screenshots=docs/images]

Exits 77 (CTest's skip code) when chromium, chromium-driver or selenium is
missing."""

import argparse
import json
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
        self.build = build
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
        self.catalog = catalog
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

    def create_model(self, model_id, record):
        """Writes a record through the CLI (gRPC), as a user would."""
        path = os.path.join(self.dir, f"{model_id}.json")
        with open(path, "w", encoding="utf-8") as out:
            json.dump(record, out, ensure_ascii=False)
        subprocess.run([f"{self.build}/cli/modelatlas", f"--catalog=127.0.0.1:{self.catalog}",
                        "models", "create", model_id, f"--file={path}"],
                       check=True, capture_output=True)

    def stop(self):
        for process in reversed(self.processes):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class BrowserTest(unittest.TestCase):
    @staticmethod
    def browser(javascript=True):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1200,2200"):
            options.add_argument(flag)
        if not javascript:
            options.add_experimental_option(
                "prefs", {"profile.managed_default_content_settings.javascript": 2})
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)

    @classmethod
    def setUpClass(cls):
        cls.stack = Stack(ARGS.build)
        cls.driver = cls.browser()

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.stack.stop()

    def body(self):
        return self.driver.find_element("tag name", "body").text

    def wait_for_url(self, fragment, timeout=10):
        deadline = time.time() + timeout
        while fragment not in self.driver.current_url and time.time() < deadline:
            time.sleep(0.1)
        self.assertIn(fragment, self.driver.current_url)

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
        self.assertIn("Newer models of the same size", text)
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

    def test_changing_the_context_replans(self):
        from selenium.webdriver.common.by import By
        self.open("/models/llama-3-1-8b")
        before = self.body()
        context = self.driver.find_element(By.NAME, "context")
        context.clear()
        context.send_keys("32768")
        self.driver.find_element(By.CSS_SELECTOR, "form.workload button").click()
        self.wait_for_url("context=32768")
        after = self.body()
        self.assertIn("Assumed workload: 32,768-token context", after)
        # A longer context needs a larger KV cache: the verdict's figure changes.
        verdict = lambda text: next(l for l in text.splitlines() if l.startswith("Needs "))
        self.assertNotEqual(verdict(before), verdict(after))

    def test_card_link_and_back(self):
        from selenium.webdriver.common.by import By
        self.open("/models/llama-3-1-8b")
        link = self.driver.find_element(By.CSS_SELECTOR, "a[href^='/hardware/']")
        card_path = link.get_attribute("href")
        link.click()
        self.wait_for_url("/hardware/")
        self.assertEqual(self.driver.current_url, card_path)
        self.assertIn("What it runs", self.body())
        self.driver.back()
        self.wait_for_url("/models/llama-3-1-8b")
        self.assertIn("Which cards run it", self.body())

    def test_search_page(self):
        from selenium.webdriver.common.by import By
        self.open("/search")
        # The page's own form (the header has a search box named q too).
        self.driver.find_element(By.CSS_SELECTOR, "form.search input[name=q]").send_keys("llama 3.1")
        self.driver.find_element(By.NAME, "order_by").send_keys("parameters desc")
        self.driver.find_element(By.CSS_SELECTOR, "form.search button").click()
        self.wait_for_url("q=llama")
        names = [a.text for a in self.driver.find_elements(
            By.CSS_SELECTOR, "table a[href^='/models/']")]
        self.assertIn("Llama 3.1 8B", names)
        self.assertTrue(all("llama" in n.lower() for n in names), names)
        # The page's state is in its URL: opening that URL again gives the same rows.
        again = self.driver.current_url
        self.driver.get(again)
        self.assertEqual(names, [a.text for a in self.driver.find_elements(
            By.CSS_SELECTOR, "table a[href^='/models/']")])

    def test_json_api_and_its_errors(self):
        self.driver.get(self.stack.base + "/v1/models/megatron-bert")
        record = json.loads(self.body())
        self.assertEqual(record["display_name"], "Megatron-BERT")
        self.driver.get(self.stack.base + "/v1/models/no-such-model")
        error = json.loads(self.body())["error"]
        self.assertEqual(error["code"], 404)
        self.assertEqual(error["status"], "NOT_FOUND")
        self.assertIn("no-such-model", error["message"])
        self.driver.get(self.stack.base + "/v1/models?page_size=-1")
        error = json.loads(self.body())["error"]
        self.assertEqual(error["status"], "INVALID_ARGUMENT")
        self.assertIn("page_size", error["message"])
        # The browser logs the 404 and 400 it was shown; those were expected.
        logged = self.driver.get_log("browser")
        self.assertTrue(all(e["source"] == "network" for e in logged), logged)

    def test_hostile_names_are_text(self):
        from selenium.common.exceptions import NoAlertPresentException
        from selenium.webdriver.common.by import By
        name = "<script>alert(1)</script> \u202egnp.exe"
        self.stack.create_model("hostile-browser", {
            "display_name": name,
            "organizations": ["\"><img src=x onerror=alert(2)>"],
            "parameters_notes": "</p><script>alert(3)</script>",
            "provenance": {"source": "<b>a browser test</b>"}})
        for path in ("/models/hostile-browser", "/search?q=script"):
            text = self.open(path)
            with self.assertRaises(NoAlertPresentException, msg=path):
                self.driver.switch_to.alert.text
            self.assertIn("<script>alert(1)</script> [U+202E]gnp.exe", text, path)
            self.assertNotIn("\u202e", text, path)
            self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "img[src='x']"), [], path)
            self.assertEqual(self.driver.execute_script(
                "return document.querySelectorAll('script:not([src])').length"), 0, path)
        self.assertIn('"><img src=x onerror=alert(2)>', self.open("/models/hostile-browser"))

    def test_pages_work_without_javascript(self):
        from selenium.webdriver.common.by import By
        driver = self.browser(javascript=False)
        try:
            driver.get(self.stack.base + "/models/llama-3-1-8b")
            # Scripts are really off: choosing a format re-plans only with the button.
            driver.find_element(By.CSS_SELECTOR, "select[name=weights] option[value=int4]").click()
            time.sleep(1)
            self.assertNotIn("weights=int4", driver.current_url)
            context = driver.find_element(By.NAME, "context")
            context.clear()
            context.send_keys("16384")
            driver.find_element(By.CSS_SELECTOR, "form.workload button").click()
            deadline = time.time() + 10
            while "context=16384" not in driver.current_url and time.time() < deadline:
                time.sleep(0.1)
            self.assertIn("context=16384", driver.current_url)
            text = driver.find_element(By.TAG_NAME, "body").text
            self.assertIn("Assumed workload: 16,384-token context", text)
            self.assertIn("weights=int4", driver.current_url)
            self.assertIn("Which cards run it", text)
        finally:
            driver.quit()


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
