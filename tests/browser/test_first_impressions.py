"""What a new user sees first: the package list fits, the chips breathe, dates read the same everywhere."""

import pytest
from django.test import Client

from accounts.services import curator_ensure, tenant_get_or_create

WIDTHS = [1024, 1280, 1440]


@pytest.fixture
def curator_page(browser, live_server, transactional_db):
    from knowledge.services import catalog_sync_bundled

    catalog_sync_bundled()
    user = curator_ensure(username="curadora", tenant=tenant_get_or_create(slug="acme"), password="x")
    client = Client()
    client.force_login(user)
    pages = []

    def open_at(width: int):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 800})
        context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
        page = context.new_page()
        pages.append(context)
        return page

    yield open_at
    for context in pages:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_package_list_shows_its_last_column_whole(curator_page, width):
    page = curator_page(width)
    page.goto("/admin/knowledge/package/")
    header = page.locator("#result_list thead th.column-last_change")
    cell = page.locator("#result_list tbody tr").first.locator("td.field-last_change")
    page.wait_for_selector("#result_list")
    visible = page.evaluate(
        """() => {
          const cell = document.querySelector('#result_list tbody tr td.field-last_change');
          const r = cell.getBoundingClientRect();
          // Every ancestor that clips (overflow other than visible) must contain the cell,
          // and the page must not scroll sideways to reach it.
          for (let el = cell.parentElement; el; el = el.parentElement) {
            const style = getComputedStyle(el);
            if (style.overflowX !== 'visible') {
              const box = el.getBoundingClientRect();
              if (r.right > box.right + 0.5 && el.scrollWidth <= el.clientWidth) return 'clipped by ' + el.id;
            }
          }
          return r.right <= window.innerWidth + 0.5 ? 'ok' : 'beyond the window: ' + r.right;
        }"""
    )
    assert header.count() == 1 and cell.count() == 1
    assert visible == "ok"
    assert cell.inner_text().endswith("by system")  # the whole text, not an ellipsis


# --- the demo -------------------------------------------------------------------------------

from tests.browser.test_demo_chat import ask, work_permit_catalog  # noqa: E402,F401  (fixture)


@pytest.fixture
def chat(demo, work_permit_catalog):  # noqa: F811
    return demo


def test_clarification_chips_do_not_touch(chat):
    page = chat
    page.click("#tab-components")
    page.click("#row-equipment-827")
    page.keyboard.press("Escape")
    page.wait_for_function("() => !window.contextoDemo.agent.getState().focus")
    turn = ask(page, "Explique isso.")
    assert turn["response"]["status"] == "clarification"
    boxes = [b.bounding_box() for b in page.locator(".msg.clarification .options button").all()]
    assert len(boxes) == 2
    first, second = sorted(boxes, key=lambda b: (b["y"], b["x"]))
    same_line = abs(first["y"] - second["y"]) < 1
    gap = second["x"] - (first["x"] + first["width"]) if same_line else second["y"] - (first["y"] + first["height"])
    assert gap >= 4, boxes


@pytest.mark.parametrize("locale", ["en-US", "pt-BR"])
def test_the_start_date_reads_day_first_in_the_field_as_in_the_table(browser, live_server, demo_user, locale):
    from django.test import Client

    client = Client()
    client.force_login(demo_user)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1360, "height": 900}, locale=locale)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    try:
        page.goto("/demo/")
        page.wait_for_selector("html[data-demo-ready='true']")
        page.click("#tab-components")
        page.click("#row-equipment-828")
        cell = page.inner_text("#row-equipment-828 .cell-start")
        assert cell == "03/09/2026"
        assert page.input_value("#field-start") == cell  # the same text, whatever the browser's locale
        page.fill("#field-start", "05/10/2026")
        page.press("#field-start", "Tab")
        assert page.inner_text("#row-equipment-828 .cell-start") == "05/10/2026"
        assert page.get_attribute("#row-equipment-828", "data-start") == "2026-10-05"
        page.fill("#field-start", "31/02/2026")  # no such day: the row keeps its date
        page.press("#field-start", "Tab")
        assert page.inner_text("#row-equipment-828 .cell-start") == "05/10/2026"
        assert page.evaluate("() => document.querySelector('#field-start').validity.valid") is False
    finally:
        context.close()
