"""Pure answers and rules of the server: walks, authorization, responses, search queries."""
