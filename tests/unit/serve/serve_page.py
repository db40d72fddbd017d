#!/usr/bin/env python3
"""`poot serve`'s chat page (web/chat, docs/serve.md "The chat page") in headless Chromium
through selenium, on the demo model on Vulkan (lavapipe in CI). SKIP without the device,
selenium, chromium or chromedriver (scripts/deps: apt-serve.txt, pip-serve.txt).

- GET / is the page (text/html) without the API key, /chat.js and /chat.css its files; a name
  outside the folder's plain names is 404;
- the page shows the model's name from /v1/models;
- typing "Hello!" and Enter streams the reply: the assistant's text is seen growing in more
  than one step before it ends, and equals the README's greedy answer at temperature 0;
- a JSON schema in its box makes the reply JSON that validates;
- Stop during a long reply ends it (marked stopped), the server counts the request as
  cancelled, and the page can send again;
- a screenshot is saved to $POOT_PAGE_SHOT (docs/serve-chat.png is made this way)."""
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from serve_openai import KEY, Server, check, skip_reason  # noqa: E402

HELLO = "Hello! I am Poot. Would you like to hear a story?"


def wait(cond, what, timeout=60):
    t = time.time()
    while time.time() - t < timeout:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    check(False, "timed out waiting for", what)


def main():
    poot = os.environ.get("POOT")
    why = skip_reason(poot, need_openai=False)
    if why:
        print("SKIP:", why)
        return 77
    try:
        from selenium import webdriver
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys
    except ImportError:
        print("SKIP: selenium is not installed (scripts/deps/pip-serve.txt)")
        return 77
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_bin = shutil.which("chromedriver")
    if not chromium or not driver_bin:
        print("SKIP: chromium and chromedriver are not installed (scripts/deps/apt-serve.txt)")
        return 77
    src = os.environ.get("POOT_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", "..", ".."))
    model = os.path.join(src, "models", "poot-demo.gguf")
    t0 = time.time()
    s = Server(poot, model, "--alias", "poot-demo", "--api-key", KEY, ctx=256)
    browser = None
    try:
        status, headers, body = s.raw("GET", "/", key=None)
        check(status == 200 and headers["Content-Type"].startswith("text/html") and
              'id="messages"' in body, "GET /", status, headers)
        for name in ("chat.js", "chat.css"):
            check(s.raw("GET", "/" + name, key=None)[0] == 200, name)
        for bad in ("/nope.html", "/..%2fREADME.md", "/chat.exe", "/.html"):
            got = s.raw("GET", bad, key=KEY)
            check(got[0] == 404, "404 for", bad, got)
        opts = webdriver.ChromeOptions()
        opts.binary_location = chromium
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--window-size=960,640"):
            opts.add_argument(a)
        browser = webdriver.Chrome(options=opts, service=webdriver.ChromeService(driver_bin))
        browser.get(s.base + "/")
        find = lambda id_: browser.find_element(By.ID, id_)  # noqa: E731
        key = find("api-key")
        key.send_keys(KEY)
        browser.execute_script("arguments[0].dispatchEvent(new Event('change'))", key)
        wait(lambda: find("model-name").text == "poot-demo", "the model's name")

        def setting(id_, value):
            el = find(id_)
            el.clear()
            if value != "":
                el.send_keys(value)

        setting("temperature", "0")
        setting("max-tokens", "60")
        # watch the assistant's text grow
        browser.execute_script("""
            window.lengths = [];
            new MutationObserver(() => {
              const m = document.querySelectorAll('.msg.assistant .content');
              if (m.length) window.lengths.push(m[m.length - 1].textContent.length);
            }).observe(document.getElementById('messages'),
                       {subtree: true, childList: true, characterData: true});""")
        find("input").send_keys("Hello!", Keys.ENTER)
        wait(lambda: find("status").text.startswith("finished"), "the reply")
        replies = browser.find_elements(By.CSS_SELECTOR, ".msg.assistant .content")
        check(replies[-1].text == HELLO, "the reply", repr(replies[-1].text))
        steps = sorted(set(l for l in browser.execute_script("return window.lengths") if l > 0))
        check(len(steps) >= 2 and steps[-1] == len(HELLO), "streamed in steps", steps)
        check(find("status").text == "finished: stop", "finish", find("status").text)

        # a JSON schema
        schema = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}},
                  "required": ["answer"], "additionalProperties": False}
        find("schema").send_keys(json.dumps(schema))
        find("input").send_keys("Do you like stories?", Keys.ENTER)
        wait(lambda: find("status").text.startswith("finished"), "the JSON reply")
        text = browser.find_elements(By.CSS_SELECTOR, ".msg.assistant .content")[-1].text
        check(json.loads(text)["answer"] in ("yes", "no"), "schema reply", text)
        find("schema").clear()

        # stop a long reply
        before = s.metrics()['poot_requests_total{endpoint="chat_completions",outcome="cancelled"}']
        find("clear").click()
        setting("temperature", "1")
        setting("seed", "3")
        setting("max-tokens", "200")
        find("input").send_keys("Tell me a long story about a dragon.", Keys.ENTER)
        wait(lambda: len(browser.find_elements(By.CSS_SELECTOR, ".msg.assistant .content")) and
             len(browser.find_elements(By.CSS_SELECTOR, ".msg.assistant .content")[-1].text) > 20,
             "the story starts")
        find("stop").click()
        wait(lambda: browser.find_elements(By.CSS_SELECTOR, ".msg.assistant.stopped"), "stopped")
        check(find("status").text == "stopped" and find("send").is_enabled() and
              not find("stop").is_enabled(), "after stop", find("status").text)
        key_c = 'poot_requests_total{endpoint="chat_completions",outcome="cancelled"}'
        wait(lambda: s.metrics()[key_c] > before, "the server counts the cancel")
        find("input").send_keys("Hello!", Keys.ENTER)
        wait(lambda: find("status").text.startswith("finished"), "a reply after the stop")
        shot = os.environ.get("POOT_PAGE_SHOT")
        if shot:
            browser.save_screenshot(shot)
    finally:
        if browser:
            browser.quit()
        s.stop()
    print(f"PASS ({time.time() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
