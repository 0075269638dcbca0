"""The scale-out deployment: HAProxy (deploy/haproxy.cfg) in front of several OAuth instances sharing Redis."""
