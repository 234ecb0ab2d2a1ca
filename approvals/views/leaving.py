"""Sending a browser on to another site after it posted a form: an OAuth authorization server, for one.

A redirect answering a form's POST is bound by the form page's Content-Security-Policy form-action, which names
the console alone (Chromium enforces it along the redirect), and the site to go to is known only once the POST is
handled. So the answer is a page that goes on by itself, without script, and offers the link as well.
"""

from urllib.parse import urlsplit

from django.shortcuts import render


def leave_for(request, url: str, purpose: str):
    site = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    return render(request, "approvals/leaving.html", {"url": url, "site": site, "purpose": purpose})
