// Torus network definitions shared by the router and (later) the chip: port numbering,
// the flit layout on a port, and the routing and dateline rules (docs/noc.md).
package noc_pkg;

  localparam int unsigned NumPorts = 5;
  localparam int unsigned PortW    = 3;
  // Port p of a router: output p sends towards that neighbour; input p receives from it.
  localparam logic [PortW-1:0] PortLocal = 3'd0;
  localparam logic [PortW-1:0] PortXPos  = 3'd1;  // to x+1 (input: from x+1)
  localparam logic [PortW-1:0] PortXNeg  = 3'd2;  // to x-1
  localparam logic [PortW-1:0] PortYPos  = 3'd3;  // to y+1
  localparam logic [PortW-1:0] PortYNeg  = 3'd4;  // to y-1

  localparam int unsigned CoordW = 8;  // pods up to 256 x 256

  // Dimension-order routing (X, then Y), the shorter way round each ring. A tie (the
  // destination exactly half way round an even ring) goes the positive way when the
  // destination coordinate is even and the negative way when it is odd: deterministic, and
  // it splits tie traffic evenly over both directions instead of loading one of them.
  function automatic logic [PortW-1:0] route(logic [CoordW-1:0] my_x, logic [CoordW-1:0] my_y,
                                             logic [CoordW-1:0] dst_x, logic [CoordW-1:0] dst_y,
                                             logic [CoordW-1:0] size_x, logic [CoordW-1:0] size_y);
    logic [CoordW:0] dx, dy;  // hops in the positive direction, modulo the ring size
    dx = (dst_x >= my_x) ? {1'b0, dst_x - my_x} : {1'b0, dst_x} + {1'b0, size_x} - {1'b0, my_x};
    dy = (dst_y >= my_y) ? {1'b0, dst_y - my_y} : {1'b0, dst_y} + {1'b0, size_y} - {1'b0, my_y};
    if (dx != '0) begin
      // On a ring of 2 both ways are one hop: take the link that is not the wraparound.
      if (size_x == 8'd2) return my_x[0] ? PortXNeg : PortXPos;
      if ((dx << 1) == {1'b0, size_x}) return dst_x[0] ? PortXNeg : PortXPos;
      return ((dx << 1) < {1'b0, size_x}) ? PortXPos : PortXNeg;
    end
    if (dy != '0) begin
      if (size_y == 8'd2) return my_y[0] ? PortYNeg : PortYPos;
      if ((dy << 1) == {1'b0, size_y}) return dst_y[0] ? PortYNeg : PortYPos;
      return ((dy << 1) < {1'b0, size_y}) ? PortYPos : PortYNeg;
    end
    return PortLocal;
  endfunction

  // Routing inside a slice: a dimension the slice spans (or no slice: w = 0) is a ring and
  // routes as above; in a dimension the slice only part-covers, the slice is a mesh and the
  // packet goes straight towards the destination, never round the ring, so it stays inside.
  function automatic logic [PortW-1:0] route_in_slice(logic [CoordW-1:0] my_x, logic [CoordW-1:0] my_y,
                                                      logic [CoordW-1:0] dst_x, logic [CoordW-1:0] dst_y,
                                                      logic [CoordW-1:0] size_x, logic [CoordW-1:0] size_y,
                                                      logic [CoordW-1:0] slice_w, logic [CoordW-1:0] slice_h);
    logic mesh_x, mesh_y;
    mesh_x = (slice_w != '0) && (slice_w != size_x);
    mesh_y = (slice_h != '0) && (slice_h != size_y);
    if (dst_x != my_x && mesh_x) return (dst_x > my_x) ? PortXPos : PortXNeg;
    if (dst_x == my_x && dst_y != my_y && mesh_y) return (dst_y > my_y) ? PortYPos : PortYNeg;
    return route(my_x, my_y, dst_x, dst_y, size_x, size_y);
  endfunction

  // Whether (x, y) is inside the slice {h [31:24], w [23:16], y0 [15:8], x0 [7:0]}
  // (w = 0: no slice, the whole pod).
  function automatic logic in_slice(logic [CoordW-1:0] x, logic [CoordW-1:0] y, logic [31:0] slice);
    if (slice[23:16] == '0) return 1'b1;
    return ({1'b0, x} >= {1'b0, slice[7:0]}) && ({1'b0, x} < {1'b0, slice[7:0]} + {1'b0, slice[23:16]}) &&
           ({1'b0, y} >= {1'b0, slice[15:8]}) && ({1'b0, y} < {1'b0, slice[15:8]} + {1'b0, slice[31:24]});
  endfunction

  // Whether the hop out of `port` from (my_x, my_y) uses a wraparound link (the dateline).
  function automatic logic crosses_dateline(logic [PortW-1:0] port, logic [CoordW-1:0] my_x,
                                            logic [CoordW-1:0] my_y, logic [CoordW-1:0] size_x,
                                            logic [CoordW-1:0] size_y);
    case (port)
      PortXPos: return my_x == size_x - 8'd1;
      PortXNeg: return my_x == '0;
      PortYPos: return my_y == size_y - 8'd1;
      PortYNeg: return my_y == '0;
      default:  return 1'b0;
    endcase
  endfunction

  // Whether a packet leaving on `port` towards (dst_x, dst_y) crosses that ring's
  // wraparound link on this hop or a later one (minimal routing crosses at most once).
  function automatic logic crosses_ahead(logic [PortW-1:0] port, logic [CoordW-1:0] my_x,
                                         logic [CoordW-1:0] my_y, logic [CoordW-1:0] dst_x,
                                         logic [CoordW-1:0] dst_y);
    case (port)
      PortXPos: return dst_x < my_x;
      PortXNeg: return dst_x > my_x;
      PortYPos: return dst_y < my_y;
      PortYNeg: return dst_y > my_y;
      default:  return 1'b0;
    endcase
  endfunction

  // The dimension a port belongs to: 0 local, 1 X, 2 Y.
  function automatic logic [1:0] port_dim(logic [PortW-1:0] port);
    case (port)
      PortXPos, PortXNeg: return 2'd1;
      PortYPos, PortYNeg: return 2'd2;
      default:            return 2'd0;
    endcase
  endfunction

endpackage
