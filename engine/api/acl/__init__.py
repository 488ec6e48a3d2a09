"""ACL users."""
