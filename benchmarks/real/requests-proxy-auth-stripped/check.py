"""requests 2.26.0 regression: Session.send() drops a Proxy-Authorization header.

2.26.0 made Session.send() always recompute proxies, which deletes an
explicitly set Proxy-Authorization header when the proxy URL carries no
credentials.  Fixed in 2.27.0 ("Fixed regression in Requests 2.26.0 where
Proxy-Authorization was incorrectly stripped from all requests sent with
Session.send", #5924).

No network: a fake transport adapter records the headers it is given.

Exit 0: header kept; 1: header stripped; 125: cannot tell.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checking import UNTESTABLE, run  # noqa: E402


def main(requests, adapters, models):
    # Make the test independent of the caller's proxy settings.
    for var in list(os.environ):
        if var.lower().endswith("_proxy"):
            del os.environ[var]

    seen = {}

    class Recorder(adapters.BaseAdapter):
        def send(self, request, **kwargs):
            seen["headers"] = dict(request.headers)
            resp = models.Response()
            resp.status_code = 200
            resp.url = request.url
            resp.request = request
            resp._content = b"ok"
            return resp

        def close(self):
            pass

    session = requests.Session()
    session.mount("http://", Recorder())
    req = requests.Request(
        "GET",
        "http://example.invalid/",
        headers={"Proxy-Authorization": "Basic dXNlcjpwYXNz", "X-Marker": "1"},
    )
    prepared = session.prepare_request(req)
    resp = session.send(prepared)
    headers = seen.get("headers")
    if resp.status_code != 200 or headers is None or headers.get("X-Marker") != "1":
        print("fake adapter was not used as expected:", headers)
        return UNTESTABLE
    if headers.get("Proxy-Authorization") == "Basic dXNlcjpwYXNz":
        print("ok: Proxy-Authorization kept")
        return 0
    if "Proxy-Authorization" not in headers:
        print("regression: Proxy-Authorization stripped")
        return 1
    print("unexpected Proxy-Authorization value:", headers.get("Proxy-Authorization"))
    return UNTESTABLE


if __name__ == "__main__":
    run(main, "requests", "requests.adapters", "requests.models")
