# gunicorn reads this file from the directory it starts in (or give it with -c).
#
# Client addresses: HEYAIRA_TRUSTED_PROXIES alone decides whose X-Forwarded-For counts
# (heyaira/proxies.py). uvicorn's worker would otherwise trust that header from 127.0.0.1 by
# default and rewrite the peer first; trusting no address here turns that off. Do not pass
# --forwarded-allow-ips: set HEYAIRA_TRUSTED_PROXIES instead (docs/operating.md).
forwarded_allow_ips = ""
